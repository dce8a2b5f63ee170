/**
 * The postgres-mode schema, created idempotently at start under an advisory lock so replicas
 * starting together do not race. The database itself makes gaps and forks impossible even if the
 * code is wrong:
 *   - `idx` is the primary key (one node per index), `prev` is unique (one child per digest);
 *   - `(prev_idx, prev)` references `(idx, digest)`: every link names the real previous node;
 *   - a CHECK recomputes the node digest with PostgreSQL's own sha256();
 *   - genesis, and only genesis, links to 32 zero bytes;
 *   - triggers refuse UPDATE, DELETE and TRUNCATE of nodes, and a head that moves backwards;
 *   - a signed checkpoint, once stored, is never changed (one per origin and size).
 * pae_sha256 is deliberately not unique: two verdicts with identical frames in the same millisecond
 * produce byte-identical receipts. Commits are made idempotent by their random batch_id instead.
 */
import type pg from 'pg';

/** pg_advisory_lock key serialising migrations ('khipu' in ASCII). */
export const MIGRATION_LOCK = 0x6b68697075n;
/** Session advisory lock keys for leadership among replicas. */
export const LEAD_LOCK_BASE = 0x6b6869707500n;

const ZERO32 = `'\\x${'00'.repeat(32)}'::bytea`;

export const SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS ledger_head (
  id smallint PRIMARY KEY CHECK (id = 0),
  size bigint NOT NULL CHECK (size >= 0),
  head bytea NOT NULL CHECK (octet_length(head) = 32),
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO ledger_head (id, size, head) VALUES (0, 0, ${ZERO32}) ON CONFLICT (id) DO NOTHING;

CREATE TABLE IF NOT EXISTS ledger_node (
  idx bigint PRIMARY KEY CHECK (idx >= 0),
  prev bytea NOT NULL UNIQUE CHECK (octet_length(prev) = 32),
  digest bytea NOT NULL CHECK (octet_length(digest) = 32),
  pae_sha256 bytea NOT NULL CHECK (octet_length(pae_sha256) = 32),
  payload bytea NOT NULL,
  sig bytea NOT NULL,
  keyid text NOT NULL,
  kind text NOT NULL,
  ts_utc text NOT NULL,
  simulated boolean NOT NULL,
  replica_id text NOT NULL,
  batch_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  prev_idx bigint GENERATED ALWAYS AS (CASE WHEN idx = 0 THEN NULL ELSE idx - 1 END) STORED,
  CONSTRAINT ledger_node_idx_digest UNIQUE (idx, digest),
  CONSTRAINT ledger_node_link FOREIGN KEY (prev_idx, prev) REFERENCES ledger_node (idx, digest),
  CONSTRAINT ledger_node_digest CHECK (digest = sha256('svc.khipu.node.v1'::bytea || '\\x0a'::bytea || int8send(idx) || prev || pae_sha256)),
  CONSTRAINT ledger_node_genesis CHECK ((idx = 0) = (prev = ${ZERO32}))
);
-- the unsigned evaluation detail (JSON text), outside the node digest; added to older schemas in place
ALTER TABLE ledger_node ADD COLUMN IF NOT EXISTS detail text;
CREATE INDEX IF NOT EXISTS ledger_node_batch ON ledger_node (batch_id);
CREATE INDEX IF NOT EXISTS ledger_node_pae ON ledger_node (pae_sha256);

CREATE TABLE IF NOT EXISTS ledger_key (
  keyid text PRIMARY KEY CHECK (keyid ~ '^[0-9a-f]{64}$'),
  spki_pem text NOT NULL,
  added_at timestamptz NOT NULL DEFAULT now()
);

-- one checkpoint per (origin, size), whichever replica signed it first: replicas serve one sequence
CREATE TABLE IF NOT EXISTS ledger_checkpoint (
  origin text NOT NULL,
  size bigint NOT NULL CHECK (size >= 0),
  note text NOT NULL,
  replica_id text NOT NULL,
  signed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (origin, size)
);

CREATE OR REPLACE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger_node is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE OR REPLACE TRIGGER ledger_node_no_change BEFORE UPDATE OR DELETE ON ledger_node FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE OR REPLACE TRIGGER ledger_node_no_truncate BEFORE TRUNCATE ON ledger_node FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();

CREATE OR REPLACE FUNCTION ledger_head_forward() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'UPDATE' THEN
    RAISE EXCEPTION 'ledger_head: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF NEW.size < OLD.size THEN
    RAISE EXCEPTION 'ledger_head may not move backwards (% -> %)', OLD.size, NEW.size USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.size > 0 AND NOT EXISTS (SELECT 1 FROM ledger_node WHERE idx = NEW.size - 1 AND digest = NEW.head) THEN
    RAISE EXCEPTION 'ledger_head names no stored node (size %)', NEW.size USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER ledger_head_forward BEFORE UPDATE OR DELETE ON ledger_head FOR EACH ROW EXECUTE FUNCTION ledger_head_forward();
CREATE OR REPLACE TRIGGER ledger_checkpoint_no_change BEFORE UPDATE OR DELETE ON ledger_checkpoint FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE OR REPLACE TRIGGER ledger_head_no_truncate BEFORE TRUNCATE ON ledger_head FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();
`;

/** Creates the schema if missing; safe to run from every replica at every start. */
export async function migrate(client: pg.ClientBase): Promise<void> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()]);
  try {
    await client.query(SCHEMA_SQL);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()]);
  }
}
