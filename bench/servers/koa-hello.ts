/**
 * Baseline: bare Koa + @koa/router answering {"hello":"world"} (the framework-overhead floor), and
 * `/sized/:bytes`, a JSON body of exactly that many bytes serialised per request (what a body of
 * a route's size costs the framework, the kernel's loopback and the load generator).
 */
import Koa from 'koa';
import Router from '@koa/router';

const app = new Koa();
const router = new Router();
router.get('/hello', (ctx) => {
  ctx.body = { hello: 'world' };
});
router.get('/sized/:bytes', (ctx) => {
  const bytes = Math.min(Math.max(Number(ctx.params.bytes) || 0, 10), 1 << 20);
  ctx.body = { pad: 'x'.repeat(bytes - 10) }; // {"pad":""} is 10 bytes
});
app.use(router.routes());
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.once('SIGTERM', () => server.close());
