package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/conversation"
	"github.com/murmur/mur/internal/manifest"
)

func init() { register(newConversationCmd) }

func newConversationCmd(env *Env) *cobra.Command {
	var manifestPath, storeName string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "conversation",
		Short: "List, print and remove a capsule's conversation records",
		Long: `A capsule with context.record: on (the default) keeps one record per
context under ~/.murmur/conversations/<record_store>/<context>/conversation.jsonl.
These commands read the capsule's store: its context.record_store, else its
name, from --manifest; --store names a store directly.`,
		Example: "  mur conversation ls\n  mur conversation show ctx_01k4m2y7xq8f9v3n5r7t9w1c2e\n  mur conversation rm ctx_01k4m2y7xq8f9v3n5r7t9w1c2e --store shey",
	}
	cmd.PersistentFlags().StringVar(&manifestPath, "manifest", "murmur.yaml", "capsule manifest whose record_store to read")
	cmd.PersistentFlags().StringVar(&storeName, "store", "", "the record store's name under ~/.murmur/conversations/ (instead of the manifest's)")
	store := func(cmd *cobra.Command) (conversation.Store, error) {
		home, err := config.MurmurDir()
		if err != nil {
			return conversation.Store{}, err
		}
		if storeName != "" {
			if strings.ContainsAny(storeName, `/\`) || strings.HasPrefix(storeName, ".") {
				return conversation.Store{}, usageError(fmt.Errorf("--store %q: give one directory name under ~/.murmur/conversations/", storeName))
			}
			return conversation.Store{Dir: conversation.StoreDir(home, storeName)}, nil
		}
		if err := needProject(cmd, manifestPath); err != nil {
			return conversation.Store{}, err
		}
		c, ds := manifest.LoadCapsule(manifestPath)
		if c == nil || ds.HasErrors() {
			writeDiagnostics(env.Stderr, ds, true)
			return conversation.Store{}, &ExitError{Code: ExitFailed, Silent: true}
		}
		p, err := conversation.PolicyFor(c.Effective(), home)
		return p.Store, err
	}

	ls := &cobra.Command{
		Use:     "ls",
		Short:   "List the store's records: context, owner, messages, last write",
		Example: "  mur conversation ls\n  mur conversation ls --store shey --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := store(cmd)
			if err != nil {
				return err
			}
			list, err := s.List()
			if err != nil {
				return &ExitError{Code: ExitFailed, Err: err}
			}
			if asJSON {
				if list == nil {
					list = []conversation.Summary{}
				}
				return writeJSON(env.Stdout, list)
			}
			if len(list) == 0 {
				fmt.Fprintf(env.Stderr, "mur: no conversation records in %s\n", s.Dir)
				return nil
			}
			fmt.Fprintf(env.Stdout, "%-40s %-16s %8s  %s\n", "CONTEXT", "OWNER", "MESSAGES", "LAST WRITE")
			for _, r := range list {
				owner := r.Owner
				if owner == "" {
					owner = "(unowned)"
				}
				fmt.Fprintf(env.Stdout, "%-40s %-16s %8d  %s\n", r.ContextID, owner, r.Messages, r.LastWrite.Format("2006-01-02 15:04:05"))
				if r.Error != "" {
					fmt.Fprintf(env.Stdout, "  damaged: %s\n", r.Error)
				}
			}
			return nil
		},
	}
	ls.Flags().BoolVar(&asJSON, "json", false, "print the list as one JSON array")

	var showJSON bool
	show := &cobra.Command{
		Use:     "show CONTEXT",
		Short:   "Print a record's messages, oldest first",
		Example: "  mur conversation show ctx_01k4m2y7xq8f9v3n5r7t9w1c2e --json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := store(cmd)
			if err != nil {
				return err
			}
			rec, err := conversation.ReadFile(s.Path(args[0]))
			if err != nil {
				return &ExitError{Code: ExitFailed, Err: err}
			}
			if rec.Header == nil && len(rec.Entries) == 0 {
				return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%w for context %q in %s; mur conversation ls lists them", conversation.ErrNoRecord, args[0], s.Dir)}
			}
			if showJSON {
				return writeJSON(env.Stdout, struct {
					Header   *conversation.Header `json:"header"`
					Messages []conversation.Entry `json:"messages"`
				}{rec.Header, rec.Entries})
			}
			printRecord(env.Stdout, rec)
			return nil
		},
	}
	show.Flags().BoolVar(&showJSON, "json", false, "print the header and messages as one JSON document")

	rm := &cobra.Command{
		Use:     "rm CONTEXT",
		Short:   "Remove a record whole, whichever capsule owns it",
		Example: "  mur conversation rm ctx_01k4m2y7xq8f9v3n5r7t9w1c2e",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := store(cmd)
			if err != nil {
				return err
			}
			if err := s.Remove(args[0]); err != nil {
				if !errors.Is(err, conversation.ErrNoRecord) {
					err = fmt.Errorf("remove the record of %q: %w", args[0], err)
				}
				return &ExitError{Code: ExitFailed, Err: err}
			}
			fmt.Fprintf(env.Stderr, "mur: removed the conversation record of %s\n", args[0])
			return nil
		},
	}
	cmd.AddCommand(ls, show, rm)
	return cmd
}

// printRecord prints a record one message a paragraph.
func printRecord(w io.Writer, rec conversation.Record) {
	if h := rec.Header; h != nil {
		fmt.Fprintf(w, "context %s  owner %s", h.ContextID, h.Capsule)
		if h.Dropped > 0 {
			fmt.Fprintf(w, "  %d older messages dropped (through #%d)", h.Dropped, h.DroppedThrough)
		}
		fmt.Fprintln(w)
	}
	for _, e := range rec.Entries {
		fmt.Fprintf(w, "#%d %s  %s  %s %s\n", e.ID, e.Message.Role, e.Time.Format("2006-01-02 15:04:05"), e.SessionID, e.TaskID)
		for _, b := range e.Message.Content {
			switch {
			case b.Text != "" && b.ToolUseID != "":
				fmt.Fprintf(w, "  [result of %s] %s\n", b.ToolUseID, indent(b.Text))
			case b.Name != "":
				fmt.Fprintf(w, "  [call %s %s] %s\n", b.ID, b.Name, b.Input)
			default:
				fmt.Fprintf(w, "  %s\n", indent(b.Text))
			}
		}
	}
}

func indent(s string) string { return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") }
