/**
 * Baselines: bare Koa + @koa/router answering {"hello":"world"} (the framework-overhead floor);
 * `/sized/:bytes`, a JSON body of exactly that many bytes serialised per request (what a body of
 * a route's size costs the framework, the kernel's loopback and the load generator); and
 * `/pool?task=<JSON>`, that task run by a bare Piscina pool on the built worker entry, its answer
 * sent as is (the least any Koa front end of a worker pool pays per kernel call). The pool has the
 * service's thread count and thread priority (POOL_THREADS, POOL_NICE) and starts on first use.
 */
import Koa from 'koa';
import Router from '@koa/router';
import type { Piscina } from 'piscina';
import { barePool } from '../pool-baseline.js';

const app = new Koa();
const router = new Router();
router.get('/hello', (ctx) => {
  ctx.body = { hello: 'world' };
});
router.get('/sized/:bytes', (ctx) => {
  const bytes = Math.min(Math.max(Number(ctx.params.bytes) || 0, 10), 1 << 20);
  ctx.body = { pad: 'x'.repeat(bytes - 10) }; // {"pad":""} is 10 bytes
});
let pool: Piscina | undefined;
// parsed once per query string, as the service works out a kernel's parameters once per query
const tasks = new Map<string, unknown>();
router.get('/pool', async (ctx) => {
  pool ??= barePool({ threads: Number(process.env.POOL_THREADS ?? 2), niceIncrement: Number(process.env.POOL_NICE ?? 0) });
  let task = tasks.get(ctx.querystring);
  if (task === undefined) tasks.set(ctx.querystring, (task = JSON.parse(String(ctx.query.task))));
  const result = (await pool.run(task)) as { ok: boolean; value: string };
  if (!result.ok) ctx.throw(500);
  ctx.type = 'application/json';
  ctx.body = result.value;
});
app.use(router.routes());
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close();
  void pool?.destroy();
});
