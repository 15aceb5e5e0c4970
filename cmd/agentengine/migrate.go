package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentengine/agentengine/session/backend"
	"github.com/agentengine/agentengine/session/postgres"
)

func newMigrateCmd() *cobra.Command {
	var dsn string
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade the Postgres session schema",
		Long: `Create or upgrade the schema of the shared Postgres session store, then exit.
Replicas also migrate when they start; run this first when several replicas start at
once or when the database user of the replicas may not change the schema.

The database is --dsn, else ` + backend.EnvDSN + `. Tables are created in the DSN's
search_path (by default the user's schema, else public).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			source := "--dsn"
			if strings.TrimSpace(dsn) == "" {
				dsn, source = strings.TrimSpace(os.Getenv(backend.EnvDSN)), backend.EnvDSN
			}
			if dsn == "" {
				return fmt.Errorf("no database to migrate: pass --dsn or set %s", backend.EnvDSN)
			}
			from, to, err := postgres.MigrateDSN(cmd.Context(), dsn)
			if err != nil {
				return fmt.Errorf("migrate the session database (DSN from %s): %w", source, err)
			}
			if from == to {
				fmt.Fprintf(cmd.OutOrStdout(), "session schema is current (version %d)\n", to)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "session schema migrated from version %d to %d\n", from, to)
			return nil
		},
	}
	cmd.Flags().StringVar(&dsn, "dsn", "", "Postgres connection string (default: $"+backend.EnvDSN+")")
	return cmd
}
