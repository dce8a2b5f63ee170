/**
 * The JSON Schemas of each kernel's `result`, `checks` and `constants`, read from its declaration:
 * the return type of `run` that `defineKernel` keeps, resolved by the TypeScript compiler over the
 * files of workers/kernels/. Build-time only (npm run kernels:schemas); the service reads the
 * committed output.
 */
import ts from 'typescript';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { KernelDef } from '../../workers/kernel-def.js';
import { TypeToJsonSchema, UnsupportedTypeError, type JsonSchema } from './type-to-json-schema.js';

export interface KernelOutputSchemas {
  result: JsonSchema;
  checks: JsonSchema;
  /** Only for a kernel whose `run` returns `constants`. */
  constants?: JsonSchema;
}

/** The kernel files: every module of workers/kernels/ except the domain lists. */
export function kernelFiles(root: string): string[] {
  const dir = join(root, 'workers', 'kernels');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && !f.startsWith('index-'))
    .sort()
    .map((f) => join(dir, f));
}

function compilerOptions(root: string): ts.CompilerOptions {
  const file = join(root, 'tsconfig.json');
  const read = ts.readConfigFile(file, (p) => ts.sys.readFile(p));
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  return { ...ts.parseJsonConfigFileContent(read.config, ts.sys, root).options, noEmit: true };
}

/** `export default defineKernel({ id: '…', … })`: the call and its id, or undefined for another module. */
function kernelDeclaration(sf: ts.SourceFile): { call: ts.CallExpression; id: string } | undefined {
  for (const stmt of sf.statements) {
    if (!ts.isExportAssignment(stmt) || stmt.isExportEquals || !ts.isCallExpression(stmt.expression)) continue;
    const call = stmt.expression;
    const arg = call.arguments[0];
    if (!ts.isIdentifier(call.expression) || call.expression.text !== 'defineKernel' || !arg || !ts.isObjectLiteralExpression(arg)) continue;
    for (const p of arg.properties) {
      if (ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === 'id' && ts.isStringLiteralLike(p.initializer)) return { call, id: p.initializer.text };
    }
  }
  return undefined;
}

/** An empty object: what the envelope writes for `checks` when `run` returns none. */
const EMPTY_OBJECT: JsonSchema = { type: 'object', additionalProperties: false };

function outputSchemas(checker: ts.TypeChecker, convert: TypeToJsonSchema, output: ts.Type, id: string): KernelOutputSchemas {
  const members = output.isUnion() ? output.types : [output];
  const part = (name: 'result' | 'checks' | 'constants'): { types: ts.Type[]; always: boolean } | undefined => {
    const types: ts.Type[] = [];
    let always = true;
    for (const m of members) {
      const prop = checker.getPropertyOfType(m, name);
      if (!prop) {
        always = false;
        continue;
      }
      const declared = checker.getTypeOfSymbol(prop);
      if (convert.maybeUndefined(declared) || prop.flags & ts.SymbolFlags.Optional) always = false;
      for (const t of convert.definedMembers(declared)) if (!types.includes(t)) types.push(t);
    }
    return types.length ? { types, always } : undefined;
  };
  const result = part('result');
  if (!result?.always) throw new UnsupportedTypeError(`${id}: run does not always return result`);
  const checks = part('checks');
  const constants = part('constants');
  const out: KernelOutputSchemas = {
    result: convert.convertAny(result.types, `${id} result`),
    // the envelope writes `checks ?? {}`
    checks: !checks ? EMPTY_OBJECT : checks.always ? convert.convertAny(checks.types, `${id} checks`) : { anyOf: [convert.convertAny(checks.types, `${id} checks`), EMPTY_OBJECT] },
  };
  if (constants) out.constants = convert.convertAny(constants.types, `${id} constants`);
  return out;
}

/** A compiler host that reads `sources` (text by absolute path) instead of those files: an edit the disk does not have. */
function hostWith(options: ts.CompilerOptions, sources: ReadonlyMap<string, string>): ts.CompilerHost {
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  return {
    ...host,
    fileExists: (name) => sources.has(name) || fileExists(name),
    getSourceFile: (name, version, onError) => {
      const text = sources.get(name);
      return text === undefined ? read(name, version, onError) : ts.createSourceFile(name, text, version);
    },
  };
}

/**
 * Each kernel's output schemas by id, from the kernel files under `root` (sorted by id); `sources`
 * replaces the text of some files (a test's edit of a declaration).
 */
export function kernelOutputSchemas(root: string, files: readonly string[] = kernelFiles(root), sources?: ReadonlyMap<string, string>): Record<string, KernelOutputSchemas> {
  const options = compilerOptions(root);
  const program = ts.createProgram({ rootNames: [...files], options, ...(sources ? { host: hostWith(options, sources) } : {}) });
  const checker = program.getTypeChecker();
  const convert = new TypeToJsonSchema(checker);
  const found: [string, KernelOutputSchemas][] = [];
  for (const file of files) {
    const sf = program.getSourceFile(file);
    if (!sf) throw new Error(`${file}: not in the program`);
    const decl = kernelDeclaration(sf);
    if (!decl) continue;
    const run = checker.getTypeAtLocation(decl.call).getProperty('run');
    const signature = run && checker.getTypeOfSymbolAtLocation(run, decl.call).getCallSignatures()[0];
    if (!signature) throw new Error(`${file}: the kernel has no run`);
    found.push([decl.id, outputSchemas(checker, convert, signature.getReturnType(), decl.id)]);
  }
  found.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(found);
}

/** The schemas file for `kernels`: every one must have a declaration under `root`, and every declaration a registered kernel. */
export function renderResultSchemas(root: string, kernels: readonly KernelDef[]): string {
  const all = kernelOutputSchemas(root);
  const ids = kernels.map((k) => k.id);
  const missing = ids.filter((id) => !Object.hasOwn(all, id));
  if (missing.length) throw new Error(`no defineKernel declaration found for ${missing.join(', ')}`);
  const unregistered = Object.keys(all).filter((id) => !ids.includes(id));
  if (unregistered.length) throw new Error(`declared but not registered: ${unregistered.join(', ')}`);
  return `${JSON.stringify(all, null, 2)}\n`;
}
