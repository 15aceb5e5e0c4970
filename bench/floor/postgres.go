package floor

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Writer stores one turn of the hop floors with a database: five rows in one
// transaction (SQLite and Postgres implement it).
type Writer interface {
	Write5(ctx context.Context, session, input, text string) error
}

// Postgres is the Postgres floor's event table, written through a pgx pool of the same
// size as the Postgres session store's default (16 connections).
type Postgres struct {
	pool *pgxpool.Pool
}

// PostgresMaxConns is the floor's pool size: session/postgres.DefaultMaxConns.
const PostgresMaxConns = 16

// OpenPostgres connects to dsn and creates the floor's table (floor_events, in the
// DSN's schema) when it does not exist.
func OpenPostgres(ctx context.Context, dsn string) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("floor database: %w", err)
	}
	cfg.MaxConns = PostgresMaxConns
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("floor database: %w", err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS floor_events (
		id BIGSERIAL PRIMARY KEY,
		session_id TEXT NOT NULL,
		seq BIGINT NOT NULL,
		type TEXT NOT NULL,
		data TEXT NOT NULL,
		created_at BIGINT NOT NULL,
		UNIQUE (session_id, seq))`); err != nil {
		pool.Close()
		return nil, fmt.Errorf("floor database: %w", err)
	}
	return &Postgres{pool: pool}, nil
}

const pgInsert = `INSERT INTO floor_events (session_id, seq, type, data, created_at) VALUES ($1, $2, $3, $4, $5)`

// Write5 stores one turn as five rows in one transaction, as SQLite.Write5 does: BEGIN,
// the five INSERTs sent as one pipelined batch (pgx prepares and caches the statement),
// COMMIT — three round trips.
func (p *Postgres) Write5(ctx context.Context, session, input, text string) error {
	now := time.Now().UnixMicro()
	rows := turnRows(input, text)
	return pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		var b pgx.Batch
		for i, r := range rows {
			b.Queue(pgInsert, session, i+1, r[0], r[1], now)
		}
		return tx.SendBatch(ctx, &b).Close()
	})
}

// Close closes the pool.
func (p *Postgres) Close() { p.pool.Close() }
