/**
 * postgres mode: the CoT ingest store every replica shares, created idempotently at start under an
 * advisory lock so replicas starting together do not race.
 *
 *   - `cot_event`: one row per uid, the event as ingested (its parsed tree as JSON, its exported
 *     form split around the export stamp) and `stored_seq`, when it was stored among all replicas.
 *   - `cot_store`: one row holding the last sequence given out and the totals the caps are checked
 *     against. Every ingest locks it, so ingests are decided one at a time across replicas.
 *   - `cot_put(...)`: the whole decision in one statement: the owner rule, newest `time` wins,
 *     least-recently-stored eviction down to the count cap and the byte budget, the insert, the
 *     totals, and `NOTIFY cot` with the new sequence (delivered at commit).
 */
import type pg from 'pg';

/** Serialises the migration of replicas starting together ('cotev' in ASCII; the ledger's spell 'khipu'). */
const COT_MIGRATION_LOCK = 0x636f746576n;

export const COT_CHANNEL = 'cot';

const SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS cot_store (
  id smallint PRIMARY KEY CHECK (id = 0),
  seq bigint NOT NULL CHECK (seq >= 0),
  count integer NOT NULL CHECK (count >= 0),
  bytes bigint NOT NULL CHECK (bytes >= 0)
);
INSERT INTO cot_store (id, seq, count, bytes) VALUES (0, 0, 0, 0) ON CONFLICT (id) DO NOTHING;

CREATE TABLE IF NOT EXISTS cot_event (
  uid text PRIMARY KEY,
  time_ms bigint NOT NULL,
  owner text,
  event text NOT NULL,
  head text NOT NULL,
  tail text NOT NULL,
  valid boolean NOT NULL,
  bytes integer NOT NULL CHECK (bytes >= 0),
  stored_seq bigint NOT NULL UNIQUE,
  stored_at text NOT NULL,
  replica_id text NOT NULL
);

CREATE OR REPLACE FUNCTION cot_put(p_uid text, p_time_ms bigint, p_owner text, p_event text, p_head text, p_tail text, p_valid boolean,
  p_bytes integer, p_stored_at text, p_replica text, p_max integer, p_max_bytes bigint)
RETURNS TABLE (put_result text, put_evicted text, put_seq bigint) LANGUAGE plpgsql AS $$
DECLARE
  st record;
  prior record;
  victim_uid text;
  victim_bytes integer;
  n bigint;
  total bigint;
  first_evicted text;
  replaced boolean := false;
BEGIN
  SELECT s.seq, s.count, s.bytes INTO st FROM cot_store s WHERE s.id = 0 FOR UPDATE;
  n := st.count;
  total := st.bytes;
  SELECT e.time_ms, e.owner, e.bytes INTO prior FROM cot_event e WHERE e.uid = p_uid;
  IF FOUND THEN
    -- a uid stored with a write token is replaced only with that token, whatever the time
    IF prior.owner IS NOT NULL AND prior.owner IS DISTINCT FROM p_owner THEN
      RETURN QUERY SELECT 'owned'::text, NULL::text, st.seq;
      RETURN;
    END IF;
    IF p_time_ms <= prior.time_ms THEN
      RETURN QUERY SELECT 'not_newer_than_stored'::text, NULL::text, st.seq;
      RETURN;
    END IF;
    DELETE FROM cot_event e WHERE e.uid = p_uid;
    n := n - 1;
    total := total - prior.bytes;
    replaced := true;
  END IF;
  WHILE n > 0 AND (n >= p_max OR total + p_bytes > p_max_bytes) LOOP
    DELETE FROM cot_event e WHERE e.uid = (SELECT o.uid FROM cot_event o ORDER BY o.stored_seq LIMIT 1) RETURNING e.uid, e.bytes INTO victim_uid, victim_bytes;
    first_evicted := coalesce(first_evicted, victim_uid);
    n := n - 1;
    total := total - coalesce(victim_bytes, 0);
  END LOOP;
  INSERT INTO cot_event (uid, time_ms, owner, event, head, tail, valid, bytes, stored_seq, stored_at, replica_id)
    VALUES (p_uid, p_time_ms, p_owner, p_event, p_head, p_tail, p_valid, p_bytes, st.seq + 1, p_stored_at, p_replica);
  UPDATE cot_store s SET seq = st.seq + 1, count = n + 1, bytes = total + p_bytes WHERE s.id = 0;
  PERFORM pg_notify('${COT_CHANNEL}', (st.seq + 1)::text);
  RETURN QUERY SELECT CASE WHEN replaced THEN 'replaced_older' ELSE 'new' END, first_evicted, st.seq + 1;
END $$;
`;

/** Creates the tables and the function if missing (the function is replaced: the newest start's wins). */
export async function migrateCot(client: pg.ClientBase): Promise<void> {
  await client.query('SELECT pg_advisory_lock($1)', [COT_MIGRATION_LOCK.toString()]);
  try {
    await client.query(SCHEMA_SQL);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [COT_MIGRATION_LOCK.toString()]);
  }
}
