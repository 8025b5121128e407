// Command actsection writes the act:component custom section into a built
// ACT component, from its artifact's name, version and description:
//
//	actsection -name kv -version 0.1.0 -description "..." component.wasm
//
// tools/guest/build.sh runs it for a guest written with sdk/go/act; the
// Go toolchain cannot emit a custom section itself. The file is rewritten
// in place; one that already carries a section is refused.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/murmur/mur/internal/act"
)

func main() {
	name := flag.String("name", "", "std.name (required)")
	version := flag.String("version", "", "std.version (required)")
	desc := flag.String("description", "", "std.description")
	lang := flag.String("default-language", "", "std.default-language")
	flag.Parse()
	if flag.NArg() != 1 || *name == "" || *version == "" {
		fmt.Fprintln(os.Stderr, "usage: actsection -name NAME -version VERSION [-description TEXT] [-default-language TAG] FILE.wasm")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), act.Info{Name: *name, Version: *version, Description: *desc, DefaultLanguage: *lang}); err != nil {
		fmt.Fprintln(os.Stderr, "actsection:", err)
		os.Exit(1)
	}
}

func run(file string, info act.Info) error {
	wasm, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if _, err := act.ReadSection(wasm); !errors.Is(err, act.ErrNoSection) {
		if err == nil {
			return fmt.Errorf("%s already carries an %s section", file, act.SectionName)
		}
		return fmt.Errorf("%s: %w", file, err)
	}
	sec, err := act.EncodeSection(info)
	if err != nil {
		return err
	}
	return os.WriteFile(file, act.AppendSection(wasm, sec), 0o644)
}
