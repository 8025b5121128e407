package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/murmur/mur/internal/diag"
)

// instructionLimit is the fixed 32 KiB per instruction file (Codex's
// project_doc_max_bytes default, so a file Codex loads whole loads whole).
const instructionLimit = 32768

// Instruction file statuses, as session_start.instruction_files records them.
const (
	InstrRead       = "read"
	InstrMissing    = "missing"
	InstrSameFile   = "same_file"
	InstrOutside    = "outside_work_folder"
	InstrNotAFile   = "not_a_file"
	InstrNotUTF8    = "not_utf8"
	InstrEmpty      = "empty"
	InstrUnreadable = "unreadable"
)

// PromptSources are where a system prompt comes from beyond the
// manifest's inference block (system_prompt, system_prompt_file,
// system_prompt_artifact; the parse refuses more than one).
type PromptSources struct {
	// ManifestDir is what a relative system_prompt_file is read against.
	ManifestDir string
	// ArtifactText is the payload the session read from
	// inference.system_prompt_artifact.
	ArtifactText string
	// Override is --system-prompt, which replaces the manifest's prompt;
	// nil when the flag was not given.
	Override *string
}

// InstructionFile is one entry's record in session_start.instruction_files.
type InstructionFile struct {
	Path          string `json:"path"`
	Status        string `json:"status"`
	Size          int64  `json:"size,omitempty"`
	BytesIncluded int64  `json:"bytes_included,omitempty"`
	SHA256        string `json:"sha256,omitempty"`
	// SameAs names the earlier entry a same_file entry repeats.
	SameAs string `json:"same_as,omitempty"`
}

// Prompt is the composed system prompt.
type Prompt struct {
	Text string
	// Set is false when no source and no instruction block gave any text:
	// then no system parameter is sent at all.
	Set bool
	// Source names where the base prompt came from, for session_start.
	Source       string
	Instructions []InstructionFile
}

// basePrompt reads the manifest's own prompt, or the override.
func (pl *Plan) basePrompt() (text, source string, set bool, err error) {
	inf, src := pl.Inference, pl.Prompt
	switch {
	case src.Override != nil:
		return *src.Override, "--system-prompt", true, nil
	case inf.SystemPromptFile != "":
		p := inf.SystemPromptFile
		if !filepath.IsAbs(p) {
			p = filepath.Join(src.ManifestDir, p)
		}
		b, rerr := os.ReadFile(p)
		if rerr != nil {
			d := diag.New(diag.RunPromptFile, diag.Pos{}, "inference.system_prompt_file",
				fmt.Sprintf("cannot read the system prompt file %q: %v; create it next to murmur.yaml or fix the path", inf.SystemPromptFile, rerr))
			return "", "", false, d
		}
		// Verbatim: no trimming of a file's whitespace.
		return string(b), "system_prompt_file", true, nil
	case inf.SystemPromptArtifact != "":
		return src.ArtifactText, "system_prompt_artifact:" + inf.SystemPromptArtifact, true, nil
	case deref(inf.SystemPrompt) != "":
		return *inf.SystemPrompt, "system_prompt", true, nil
	}
	return "", "", false, nil
}

// ComposePrompt builds the system prompt: the base prompt, then one block
// per inference.instruction_files entry read from workdir, in manifest
// order. The entries are already validated (relative, no ..); a file that
// resolves outside workdir is still never read.
func (pl *Plan) ComposePrompt(workdir string) (Prompt, error) {
	instructionFiles := pl.Inference.InstructionFiles
	base, source, set, err := pl.basePrompt()
	if err != nil {
		return Prompt{}, err
	}
	p := Prompt{Text: base, Set: set, Source: source, Instructions: []InstructionFile{}}
	if instructionFiles == nil {
		p.Instructions = nil
	}
	root, err := filepath.EvalSymlinks(workdir)
	if err != nil {
		return Prompt{}, fmt.Errorf("instruction files: work folder: %w", err)
	}
	type block struct {
		name    string
		aliases []string
		text    string
		size    int64
		cut     bool
		kept    int
		info    os.FileInfo
	}
	var blocks []*block
	for _, e := range instructionFiles {
		name := filepath.ToSlash(filepath.Clean(e))
		rec := InstructionFile{Path: name}
		b, info, status := readInstruction(root, name)
		rec.Status = status
		if status == InstrRead {
			for _, prev := range blocks {
				if os.SameFile(prev.info, info) {
					rec.Status, rec.SameAs = InstrSameFile, prev.name
					prev.aliases = append(prev.aliases, name)
				}
			}
		}
		if rec.Status == InstrRead {
			size := int64(len(b))
			cut := len(b) > instructionLimit
			if cut {
				n := instructionLimit
				for n > 0 && !utf8.RuneStart(b[n]) {
					n--
				}
				b = b[:n]
			}
			sum := sha256.Sum256(b)
			rec.Size, rec.BytesIncluded, rec.SHA256 = size, int64(len(b)), hex.EncodeToString(sum[:])
			blocks = append(blocks, &block{name: name, text: strings.TrimRight(string(b), "\r\n"), size: size, cut: cut, kept: len(b), info: info})
		}
		p.Instructions = append(p.Instructions, rec)
	}
	var parts []string
	if p.Text != "" {
		parts = append(parts, p.Text)
	}
	for _, bl := range blocks {
		h := "[Instruction file: " + bl.name
		if len(bl.aliases) > 0 {
			h += " (also listed as " + strings.Join(bl.aliases, ", ") + ")"
		}
		if bl.cut {
			h += fmt.Sprintf(", first %d of %d bytes", bl.kept, bl.size)
		}
		parts = append(parts, h+"]\n"+bl.text)
	}
	if len(blocks) > 0 {
		// A --system-prompt or file prompt keeps its own trailing
		// whitespace; the blocks follow it after one blank line.
		p.Text = strings.Join(parts, "\n\n")
		p.Set = true
	}
	return p, nil
}

// readInstruction reads one entry under root, following links only while
// they stay inside root.
func readInstruction(root, name string) ([]byte, os.FileInfo, string) {
	path := filepath.Join(root, filepath.FromSlash(name))
	if _, err := os.Lstat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, InstrMissing
		}
		return nil, nil, InstrUnreadable
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, InstrMissing
		}
		return nil, nil, InstrUnreadable
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, nil, InstrOutside
	}
	// Stat first, and open non-blocking: opening a FIFO for reading would
	// wait for a writer forever.
	if fi, err := os.Stat(real); err != nil {
		return nil, nil, InstrUnreadable
	} else if !fi.Mode().IsRegular() {
		return nil, nil, InstrNotAFile
	}
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, InstrUnreadable
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, InstrUnreadable
	}
	if !info.Mode().IsRegular() {
		// Swapped between the stat and the open.
		return nil, nil, InstrNotAFile
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, InstrUnreadable
	}
	if !utf8.Valid(b) {
		return nil, nil, InstrNotUTF8
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil, nil, InstrEmpty
	}
	return b, info, InstrRead
}
