package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentengine/agentengine/host/project"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/backend"
)

type sessionsOptions struct {
	dir   string
	app   string
	user  string
	store storeFlags
}

func newSessionsCmd() *cobra.Command {
	var o sessionsOptions
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, export and delete stored sessions",
		Long: `Work with a project's stored sessions. The store is chosen as "run" chooses it:
--session-backend/--session-path, then KSADK_SESSION_BACKEND/KSADK_STM_PATH, then
DIR/.agentengine/ui/sessions.sqlite. Sessions belong to an agent (--app, default: the
project's name) and a user (--user, default "user").`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVarP(&o.dir, "dir", "C", ".", "project directory")
	pf.StringVar(&o.app, "app", "", "agent name (default: the project's name)")
	pf.StringVar(&o.user, "user", "user", "user id")
	pf.StringVar(&o.store.backend, "session-backend", "", "session backend: memory or local")
	pf.StringVar(&o.store.path, "session-path", "", "SQLite session file")

	var limit int
	list := &cobra.Command{
		Use:   "list",
		Short: "List sessions, most recently updated first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withStore(cmd.Context(), &o, func(ctx context.Context, st session.Store) error {
				ss, total, err := st.ListSessions(ctx, o.app, o.user, session.ListQuery{Limit: limit})
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "SESSION\tUPDATED\tEVENTS\tLAST RUN\tTITLE")
				for _, s := range ss {
					fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", s.ID, s.UpdatedAt.Local().Format(time.DateTime), s.LastSeq, orDash(s.ActiveRunStatus), s.Title)
				}
				if err := w.Flush(); err != nil {
					return err
				}
				if total > len(ss) {
					fmt.Fprintf(cmd.ErrOrStderr(), "(%d of %d sessions; --limit shows more)\n", len(ss), total)
				}
				return nil
			})
		},
	}
	list.Flags().IntVar(&limit, "limit", 50, "how many sessions to list")

	show := &cobra.Command{
		Use:   "show SESSION_ID",
		Short: "Show a session's summary and its events, one per line",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd.Context(), &o, func(ctx context.Context, st session.Store) error {
				key := session.Key{App: o.app, User: o.user, ID: args[0]}
				s, err := st.GetSession(ctx, key)
				if err != nil {
					return sessionErr(key, err)
				}
				out := cmd.OutOrStdout()
				fmt.Fprintf(out, "session %s (agent %s, user %s)\ntitle: %s\ncreated: %s  updated: %s  events: %d\n\n",
					s.ID, s.App, s.User, s.Title, s.CreatedAt.Local().Format(time.DateTime), s.UpdatedAt.Local().Format(time.DateTime), s.LastSeq)
				evs, err := st.Events(ctx, key, session.EventQuery{})
				if err != nil {
					return err
				}
				for _, e := range evs {
					fmt.Fprintf(out, "%5d  %-18s %-10s %s\n", e.Seq, e.Type, e.Author, e.Data)
				}
				return nil
			})
		},
	}

	export := &cobra.Command{
		Use:   "export SESSION_ID",
		Short: "Write a session's events as JSON lines (one event per line) to stdout",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd.Context(), &o, func(ctx context.Context, st session.Store) error {
				key := session.Key{App: o.app, User: o.user, ID: args[0]}
				if _, err := st.GetSession(ctx, key); err != nil {
					return sessionErr(key, err)
				}
				evs, err := st.Events(ctx, key, session.EventQuery{})
				if err != nil {
					return err
				}
				enc := json.NewEncoder(cmd.OutOrStdout())
				for _, e := range evs {
					if err := enc.Encode(e); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}

	del := &cobra.Command{
		Use:   "delete SESSION_ID...",
		Short: "Delete sessions with their events",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd.Context(), &o, func(ctx context.Context, st session.Store) error {
				for _, id := range args {
					key := session.Key{App: o.app, User: o.user, ID: id}
					if err := st.DeleteSession(ctx, key); err != nil {
						return sessionErr(key, err)
					}
					fmt.Fprintln(cmd.OutOrStdout(), "deleted", id)
				}
				return nil
			})
		},
	}
	cmd.AddCommand(list, show, export, del)
	return cmd
}

func sessionErr(key session.Key, err error) error {
	return fmt.Errorf("session %q of agent %q and user %q: %w", key.ID, key.App, key.User, err)
}

func withStore(ctx context.Context, o *sessionsOptions, fn func(context.Context, session.Store) error) error {
	p, err := project.Load(o.dir)
	if err != nil {
		return err
	}
	if o.app == "" {
		o.app = p.Name
	}
	st, err := backend.Open(ctx, backend.Config{Backend: o.store.backend, Path: o.store.path, ProjectDir: p.Dir, Getenv: os.Getenv})
	if err != nil {
		return fmt.Errorf("open session store: %w", err)
	}
	defer st.Close()
	return fn(ctx, st)
}
