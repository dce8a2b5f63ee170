/**
 * Baselines: bare Koa + @koa/router answering {"hello":"world"} (the framework-overhead floor);
 * `/answer/:name`, an answer the bench registered with `PUT /answer/:name` (`{status, headers,
 * body}`: one of the service's answers as captured, its request id and traceparent included)
 * replayed as Koa sends a static JSON text, headers set through `ctx.set` (the least any Koa app
 * pays to send the same bytes: no ids to make, nothing to serialise); and
 * `/pool?task=<JSON>`, that task run by a bare Piscina pool on the built worker entry, its answer
 * sent as is (the least any Koa front end of a worker pool pays per kernel call). The pool has the
 * service's thread count, thread priority and heap cap (POOL_THREADS, POOL_NICE, POOL_MAX_OLD_MB)
 * and starts on first use.
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
const answers = new Map<string, { status: number; headers: [string, string][]; body: string }>();
router.put('/answer/:name', async (ctx) => {
  let text = '';
  for await (const chunk of ctx.req) text += chunk;
  answers.set(String(ctx.params.name), JSON.parse(text));
  ctx.status = 204;
});
router.get('/answer/:name', (ctx) => {
  const answer = answers.get(String(ctx.params.name));
  if (!answer) return ctx.throw(404, `no answer registered as ${ctx.params.name}`);
  ctx.status = answer.status;
  for (const [name, value] of answer.headers) ctx.set(name, value);
  ctx.type = 'application/json';
  ctx.body = answer.body;
});
let pool: Piscina | undefined;
// parsed once per query string, as the service works out a kernel's parameters once per query
const tasks = new Map<string, unknown>();
router.get('/pool', async (ctx) => {
  pool ??= barePool({ threads: Number(process.env.POOL_THREADS ?? 2), niceIncrement: Number(process.env.POOL_NICE ?? 0), maxOldGenerationSizeMb: Number(process.env.POOL_MAX_OLD_MB ?? 2048) });
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
