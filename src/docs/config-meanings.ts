/**
 * The meaning column of the configuration table (docs/configuration.md), by dotted config key. A
 * key whose joi schema carries a `.description()` is documented by it instead, so an entry here
 * can move next to its key without the table changing. Markdown; links are relative to docs/.
 */
export const CONFIG_MEANINGS: Readonly<Record<string, string>> = {
  env: 'selects `config/<env>.json` (`test` is used by the tests)',

  'server.port': 'listen port',
  'server.host': 'listen address',
  'server.publicBaseUrl': 'absolute base for links in bodies (else derived from the request)',
  'server.shutdownTimeoutMs':
    'after SIGTERM/SIGINT, connections still open this long are cut; the process is gone at most 1 s later (`SHUTDOWN_MARGIN_MS`, `src/shutdown.ts`) whatever still holds it',
  'server.keepAliveTimeoutMs': 'HTTP keep-alive idle timeout',

  'log.level':
    'pino level (`silent` in tests). At `info` every answer is one access line on stdout (synchronous, as pino writes by default): on a flood of 404s that is 0.83–0.85× the throughput at `warn` (`npm run bench -- http`); load tests that measure the service rather than its log run at `warn`, as `bench/` does',

  'http.jsonLimitBytes': 'JSON body limit (413 above)',
  'http.xmlLimitBytes': 'CoT XML body limit (413 above)',
  'http.traceRingSize': 'recent W3C traces kept for the mesh wire board',

  'pool.threads': 'worker threads (fixed pool); `0` = one per core',
  'pool.maxQueue':
    'hard cap on waiting kernel tasks; admission by estimated wait usually sheds far earlier (see [admission control](hostile-clients.md#admission-control))',
  'pool.taskDeadlineMs':
    'deadline per task, queue wait included (504 after); a task is admitted only if its estimated wait + run fit in 80 % of it',
  'pool.idleTimeoutMs': 'piscina idle timeout (threads are fixed anyway)',
  'pool.maxOldGenerationSizeMb':
    'heap cap per worker thread (32–4096): a kernel that outgrows it ends its thread only (500; counted in `svc_pool_crashes_total`, and piscina starts a successor). Not lower by default: V8 lets a heap capped under 2048 MB grow only 1.3–2× between full collections instead of up to 4× (`MaxGrowingFactor`, `src/heap/heap-controller.cc`), and at 256 MB `blt/entropy-patch` ran ten times the full collections and 21–26 % slower',
  'pool.retryAfterS': 'least `Retry-After` sent with a 503 shed (the estimated wait when longer)',
  'pool.signThreads': 'threads of the signing lane (its own pool: kernels never delay receipts)',
  'pool.killGraceMs': 'a task still running this long after its deadline is terminated (it was answered 504 at the deadline)',
  'pool.niceIncrement':
    'kernel threads raise their own nice value by this (Linux; `0` = off), so the main thread and the signing lane get a saturated CPU first; `0` in `config/test.json` (the tests share the machine with other processes)',
  'pool.warmup':
    'each kernel thread runs every kernel at its defaults when it starts (`workers/warm.ts`), so no request pays for compiling a kernel (a first call was ~6× its warm time at the median); `/health` is 503 (`worker-pool:utilization` "starting") until every thread has, and the `ready` log line gives the start-up time (`docs/bench.md`); `false` in `config/test.json`',
  'pool.warmupPasses':
    'passes over every kernel at warm-up (1–50): a thread calling the kernels in turn is within ~1.15× of its steady speed after four passes, but some kernels\' code is still being optimised; after sixteen, 2–9 of 65 kernels take over 1.2× their warm time on their first call, against 12–15 after four (thread CPU; 2–4 among warm calls). The price is start-up: here (two kernel threads and the main thread on 2 cores) warm-up took 7.4–9.5 s per thread and the service was ready in 8–11 s, against ~4.5 s with four passes',

  'ledger.mode':
    '`memory`, `file` or `postgres` (see [where the ledger lives](ledger.md#where-the-ledger-lives-memory-file-postgres)); `config/test.json` uses `memory`',
  'ledger.dataDir':
    'file mode: the ledger file, its tiles, lock, signing key and keyring; postgres mode: each replica\'s copy of the chain (`replica/<slot>/`)',
  'ledger.databaseUrl': 'postgres mode: `postgres://…` (required there, with `SVC_SIGNING_KEY_FILE`)',
  'ledger.pgStatementTimeoutMs':
    'postgres mode: the server cancels a statement or a lock wait after this (`statement_timeout`, `lock_timeout`; an idle transaction is ended after twice this)',
  'ledger.pgQueryTimeoutMs':
    'postgres mode: the service stops waiting for any answer after this (above `pgStatementTimeoutMs`): what bounds a database that accepts connections and never answers (a stopped process, a hung host); such a query counts as the database being down',
  'ledger.pgConnectTimeoutMs': 'postgres mode: a new connection, or a free pooled one, must be had within this',
  'ledger.groupCommitMax': 'nodes made durable by one `O_DSYNC` write (or one transaction) at most',
  'ledger.groupCommitWaitMs': 'how long a lone append waits for company (0: the rest of the event-loop turn)',
  'ledger.commitQueueMax': 'nodes waiting for a commit; beyond it 503 + `Retry-After`',
  'ledger.maxNodes':
    'memory mode, which holds the log in process memory: node cap; appends beyond it get 503 (nothing is evicted). File and postgres modes have no cap: disk is the limit',
  'ledger.signingKeyFile':
    'PKCS#8 PEM of a P-256 key; without it file mode uses `<dataDir>/signing-key.pem` (created once), memory mode a new key per start (`EPHEMERAL_SIGNING_KEY`)',
  'ledger.signBatchMax': 'receipts signed in one worker round trip at most',
  'ledger.checkpointIntervalMs':
    'while the log grows, a new signed checkpoint within this interval (`GET /ledger/checkpoint` serves the newest meanwhile); it also bounds what a restart has to read',
  'ledger.checkpointOrigin':
    'the checkpoints\' origin and key name; null: `<host of server.publicBaseUrl, or drone-intel-svc>/khipu/<first 16 hex of the keyid>`',
  'ledger.fsckAtStart':
    'file mode: after a start that opened at a checkpoint, check every record, tile and signature of the log again in the background',
  'ledger.noFlyZones': '`[{id, name, polygon: [[lat, lon], …]}]` (one demo zone by default); `geofence_inside` is `null` when empty',

  'stream.maxViewers': 'SSE viewers; 503 + `Retry-After` above',
  'stream.heartbeatMs': '`: ping` interval',
  'stream.ringSize': 'events kept for `Last-Event-ID` resume',
  'stream.tickMs': 'simulated flight step (one verdict per drone per tick)',
  'stream.sendBufferBytes':
    'bytes a viewer may leave unacknowledged before it is dropped (reset; it can resume with `Last-Event-ID`; one that had read no event yet starts again from the newest): what the process still queues for it plus, on Linux, its kernel send queue; raise it for viewers behind slow links',
  'stream.lagCheckMs':
    'how often the kernel send queues of viewers sent more than `stream.sendBufferBytes` since last seen acknowledged are read from `/proc/net/tcp{,6}` (Linux; elsewhere only the process\'s queue counts)',
  'stream.replayMaxBytes':
    'bytes of missed events replayed to one connection on a resume (never more than `stream.sendBufferBytes`); the stream then ends with `event: catchup` and the client continues from its `Last-Event-ID`',
  'stream.replayBytesPerAddressPerS':
    'replay bytes per second per client address over all its connections (burst one second\'s worth, at least `replayMaxBytes`); `0` = no limit',
  'stream.sceneSize': 'recent verdicts the 3-D scene is built from',
  'stream.maxFramesPerRequest': 'frames in one `POST /edge/3d`',
  'stream.flight':
    'the simulated flight: `on-demand` runs while somebody watches the stream (with write tokens set, somebody bearing one), `off` (the stream carries real verdicts only: what production should set), `always`',

  'adsb.enabled': 'false: no upstream calls; `/adsb` answers `[]` with `reason=disabled`',
  'adsb.providers':
    'ordered `[{name, url, attribution?}]`, by default adsb.lol, adsb.fi and airplanes.live `/v2/mil`; env form `name=url,name=url`',
  'adsb.freshMs': 'snapshot served without refetch, `live=true`',
  'adsb.staleMaxMs': 'last snapshot served `live=false` this long after failures',
  'adsb.waitBudgetMs': 'longest a request waits for the shared refresh',
  'adsb.timeoutMs': 'per upstream attempt (connect + body)',
  'adsb.minIntervalMs': 'least gap between calls to one provider',
  'adsb.maxBodyBytes': 'upstream body cap (after decompression)',
  'adsb.breakerFailures': 'transient failures before the breaker opens',
  'adsb.breakerBaseMs': 'the breaker\'s first cool-down; it doubles with each further failure',
  'adsb.breakerMaxMs': 'the breaker\'s cool-down at most',
  'adsb.rateLimitDefaultMs': 'back-off after a 429 without `Retry-After`',
  'adsb.retryAfterMaxMs': 'an upstream `Retry-After` is honoured up to this',
  'adsb.blockedMs': 'back-off after a 403 or another 4xx (a block)',
  'adsb.maxPositionAgeS': 'older positions are dropped, never extrapolated',
  'adsb.userAgent': 'User-Agent sent upstream; null: `drone-intel-svc/<version>`',
  'adsb.sharedRefresh':
    '`auto`: replicas on the ledger\'s database share each refresh and each ban (postgres mode); `postgres`: insist (needs `SVC_DATABASE_URL`); `local`: never',

  'cot.staleS': 'exported `stale` = time + this',
  'cot.maxStoredTracks': 'ingested uids kept (least recently stored evicted)',
  'cot.maxStoredBytes': 'total bytes of stored (exported) events; least recently stored evicted beyond it',
  'cot.maxFutureSkewS':
    'an ingested event\'s `time` and `start` may be at most this far ahead of the service\'s clock (0–86400); beyond it 422 `cot_time_out_of_range`',
  'cot.maxStaleAheadS': 'an ingested event\'s `stale` may be at most this far ahead of the clock (default 366 days)',
  'cot.limits.maxDepth':
    'ingest limit: element depth. Every `cot.limits.*` is checked as the body is read, 1 KiB at a time; beyond one, 422 `xml_limit_exceeded`',
  'cot.limits.maxElements': 'ingest limit: elements in all',
  'cot.limits.maxAttrsPerElement': 'ingest limit: attributes per element',
  'cot.limits.maxAttributes': 'ingest limit: attributes in all',
  'cot.limits.maxDetailChildren': 'ingest limit: children of `<detail>`',
  'cot.limits.maxNameLen': 'ingest limit: characters of one element or attribute name',
  'cot.limits.maxAttrValueLen': 'ingest limit: characters of one attribute value',
  'cot.limits.maxNameChars': 'ingest limit: UTF-16 code units of names in all (a bound on parsing work: a character beyond U+FFFF counts two)',
  'cot.limits.maxAttrChars': 'ingest limit: UTF-16 code units of attribute values in all (as for names)',
  'cot.limits.maxReferences': 'ingest limit: `&` references',
  'cot.limits.maxTextChars': 'ingest limit: UTF-16 code units of text, comments and processing instructions in all (as for names)',
  'cot.limits.maxUidLen': 'ingest limit: characters of a uid',

  'energy.wMinPerVcpu': 'idle watts per vCPU (Cloud Carbon Footprint, SPECpower)',
  'energy.wMaxPerVcpu': 'full-load watts per vCPU (must be ≥ min)',
  'energy.pue': 'power usage effectiveness (1–3; 1 = not applied)',
  'energy.gridGco2PerKwh': 'grid carbon intensity, gCO₂e/kWh (0–2000)',
  'energy.embodiedGco2PerHour': 'embodied emissions per uptime hour (SCI M; 0 = excluded)',
  'energy.raplPath': 'RAPL package counter, read when present; `none` disables',
  'energy.seriesIntervalMs': 'time between two samples of the measured energy series (50 ms – 1 h)',
  'energy.seriesPoints': 'intervals the series keeps (2–10,000; older ones are dropped)',

  'guard.headersTimeoutMs': 'the request head must arrive within this (Node answers 408 and closes)',
  'guard.requestTimeoutMs': 'the whole request must arrive within this (Node\'s own default is 300 s)',
  'guard.bodyTimeoutMs': 'a route reading a body gives up after this: 408, connection closed',
  'guard.maxHeaderBytes':
    'request line + headers at most (Node\'s `maxHeaderSize`; its own 16 KiB refused a legal `request`); at least 57344, which carries the largest legal `request` (4,096 characters × 12 bytes percent-encoded); beyond it a JSON 431',
  'guard.maxConnections': 'open connections; a new one beyond it gets `503` + `Retry-After: 1` and is closed',
  'guard.maxConnectionsPerAddress':
    'open connections from one client address (a quarter of the global cap: a load tester with hundreds of connections from one host is a user, 4,200 idle sockets an attack) (an IPv6 address counts as its /64); a new one beyond it gets the same `503` + `Retry-After: 1` as the global cap and is closed. Trusted proxies (`guard.trustProxy`) are held to the global cap only',
  'guard.writeTokens':
    'comma-separated bearer tokens for the write routes; empty = no token needed (and a start-up warning when listening beyond loopback). Each is 1–512 visible ASCII characters without spaces, or start-up refuses it. Kept only as SHA-256 digests',
  'guard.writeRatePerS':
    'ledger nodes per second each write token may append (a verdict 1, an edge batch its frames, a write appending none 1); 0 = off',
  'guard.writeBurst': 'ledger nodes a write token may append at once above the rate',
  'guard.addressWriteRatePerS': 'ledger nodes per second one client address may append without a token; 0 = off. Only for a service without `guard.writeTokens`: once tokens are set a write without one gets `401`, so there is nothing left to count per address',
  'guard.addressWriteBurst': 'ledger nodes one client address may append at once without a token',
  'guard.trustProxy':
    'proxies (addresses or CIDR ranges, comma-separated) whose `X-Forwarded-For` names the client; from any other peer the header is ignored',
  'guard.shedLogIntervalMs': 'shed requests are logged as one summary line per interval',
  'guard.shedHoldMaxMs':
    'a client shed again before its last `Retry-After` ran out gets the answer after the rest of that wait, at most this long (0 = never held)',
  'guard.shedRetryStepPerS': 'sheds per second that add one second to a shed answer\'s `Retry-After`',
  'guard.shedRetryAfterMaxS': '`Retry-After` of a shed answer at most',
  'guard.flightPauseRatio': 'the simulated flight pauses once the ledger holds this share of its cap',
};
