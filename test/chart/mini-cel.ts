// A deliberately small CEL evaluator: just the subset the chart's matchConditions use, with CEL's
// semantics where they matter for a webhook:
//   * selecting a missing key of a map is an error ("no such key"); has() is false instead;
//   * && and || are commutative over errors: false && <error> is false, true || <error> is true;
//   * exists() is true if any element is true even when others error, else an error if any errored.
// In the apiserver an error in a matchCondition makes it apply failurePolicy, so the tests below
// treat "evaluates to an error" as a distinct, unwanted outcome.

export class CelError extends Error {}

type Value = unknown;
type Token = { kind: 'id' | 'str' | 'num' | 'op'; text: string };

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  const re = /\s*(?:([A-Za-z_]\w*)|'([^']*)'|"([^"]*)"|(\d+)|(&&|\|\||==|!=|>=|<=|[!().,<>]))/y;
  let pos = 0;
  while (pos < src.length) {
    if (/^\s*$/.test(src.slice(pos))) break;
    re.lastIndex = pos;
    const m = re.exec(src);
    if (!m) throw new Error(`cannot tokenize at ${pos}: ${src.slice(pos, pos + 20)}`);
    pos = re.lastIndex;
    if (m[1] !== undefined) tokens.push({ kind: 'id', text: m[1] });
    else if (m[2] !== undefined) tokens.push({ kind: 'str', text: m[2] });
    else if (m[3] !== undefined) tokens.push({ kind: 'str', text: m[3] });
    else if (m[4] !== undefined) tokens.push({ kind: 'num', text: m[4] });
    else tokens.push({ kind: 'op', text: m[5] as string });
  }
  return tokens;
}

type Node =
  | { t: 'lit'; v: Value }
  | { t: 'var'; name: string }
  | { t: 'sel'; obj: Node; field: string }
  | { t: 'has'; obj: Node; field: string }
  | { t: 'call'; fn: 'size'; arg: Node }
  | { t: 'exists'; target: Node; v: string; body: Node }
  | { t: 'not'; x: Node }
  | { t: 'bin'; op: string; l: Node; r: Node };

function parse(src: string): Node {
  const toks = tokenize(src);
  let i = 0;
  const peek = () => toks[i];
  const take = (text?: string) => {
    const tok = toks[i++];
    if (!tok || (text !== undefined && tok.text !== text))
      throw new Error(`expected ${text ?? 'token'} at token ${i - 1}`);
    return tok;
  };
  const binary = (next: () => Node, ops: string[]) => (): Node => {
    let l = next();
    while (peek()?.kind === 'op' && ops.includes(peek()?.text as string)) {
      const op = take().text;
      l = { t: 'bin', op, l, r: next() };
    }
    return l;
  };
  const primary = (): Node => {
    const tok = take();
    if (tok.kind === 'str') return { t: 'lit', v: tok.text };
    if (tok.kind === 'num') return { t: 'lit', v: Number(tok.text) };
    if (tok.text === '(') {
      const e = or();
      take(')');
      return e;
    }
    if (tok.text === 'true' || tok.text === 'false') return { t: 'lit', v: tok.text === 'true' };
    if (tok.text === 'null') return { t: 'lit', v: null };
    if (tok.text === 'has') {
      take('(');
      const inner = postfix(primary());
      take(')');
      if (inner.t !== 'sel') throw new Error('has() needs a field selection');
      return { t: 'has', obj: inner.obj, field: inner.field };
    }
    if (tok.text === 'size') {
      take('(');
      const arg = or();
      take(')');
      return { t: 'call', fn: 'size', arg };
    }
    if (tok.kind === 'id') return { t: 'var', name: tok.text };
    throw new Error(`unexpected ${tok.text}`);
  };
  const postfix = (base: Node): Node => {
    let n = base;
    while (peek()?.text === '.') {
      take('.');
      const field = take().text;
      if (field === 'exists' && peek()?.text === '(') {
        take('(');
        const v = take().text;
        take(',');
        const body = or();
        take(')');
        n = { t: 'exists', target: n, v, body };
      } else {
        n = { t: 'sel', obj: n, field };
      }
    }
    return n;
  };
  const unary = (): Node => {
    if (peek()?.text === '!') {
      take('!');
      return { t: 'not', x: unary() };
    }
    return postfix(primary());
  };
  const rel = binary(unary, ['==', '!=', '>', '<', '>=', '<=']);
  const and = binary(rel, ['&&']);
  const or = binary(and, ['||']);
  const tree = or();
  if (i !== toks.length) throw new Error(`trailing tokens from ${i}`);
  return tree;
}

const isMap = (v: Value): v is Record<string, Value> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

function evaluate(n: Node, env: Record<string, Value>): Value {
  switch (n.t) {
    case 'lit':
      return n.v;
    case 'var':
      if (!(n.name in env)) throw new CelError(`undeclared reference to '${n.name}'`);
      return env[n.name];
    case 'sel': {
      const obj = evaluate(n.obj, env);
      if (!isMap(obj)) throw new CelError(`no such key: ${n.field} (not a map)`);
      if (!(n.field in obj)) throw new CelError(`no such key: ${n.field}`);
      return obj[n.field];
    }
    case 'has': {
      const obj = evaluate(n.obj, env);
      if (!isMap(obj)) throw new CelError(`has() on a non-map`);
      return n.field in obj;
    }
    case 'call': {
      const v = evaluate(n.arg, env);
      if (Array.isArray(v) || typeof v === 'string') return v.length;
      if (isMap(v)) return Object.keys(v).length;
      throw new CelError('no matching overload for size');
    }
    case 'exists': {
      const list = evaluate(n.target, env);
      if (!Array.isArray(list)) throw new CelError('exists() on a non-list');
      let error: unknown;
      for (const item of list) {
        try {
          if (truth(evaluate(n.body, { ...env, [n.v]: item }))) return true;
        } catch (err) {
          if (!(err instanceof CelError)) throw err;
          error = err;
        }
      }
      if (error) throw error;
      return false;
    }
    case 'not':
      return !truth(evaluate(n.x, env));
    case 'bin': {
      if (n.op === '&&' || n.op === '||') {
        const short = n.op === '||'; // the value that decides the result
        const sides = [n.l, n.r].map((side) => {
          try {
            return { v: truth(evaluate(side, env)) };
          } catch (err) {
            if (!(err instanceof CelError)) throw err;
            return { err };
          }
        });
        if (sides.some((s) => s.v === short)) return short;
        const failed = sides.find((s) => s.err);
        if (failed) throw failed.err;
        return !short;
      }
      const l = evaluate(n.l, env);
      const r = evaluate(n.r, env);
      switch (n.op) {
        case '==':
          return l === r;
        case '!=':
          return l !== r;
      }
      if (typeof l !== 'number' || typeof r !== 'number')
        throw new CelError(`no matching overload for ${n.op}`);
      return n.op === '>' ? l > r : n.op === '<' ? l < r : n.op === '>=' ? l >= r : l <= r;
    }
  }
}

function truth(v: Value): boolean {
  if (typeof v !== 'boolean') throw new CelError(`expected bool, got ${typeof v}`);
  return v;
}

/** Evaluates a boolean CEL expression; returns the boolean, or a CelError for evaluation errors. */
export function evalCel(expression: string, env: Record<string, Value>): boolean | CelError {
  const tree = parse(expression);
  try {
    return truth(evaluate(tree, env));
  } catch (err) {
    if (err instanceof CelError) return err;
    throw err;
  }
}
