// What a thrown error says about qwasm, for the fuzzer and the hostile-argument tests:
//   'named'   a ModelFormatError / UnsupportedError / TypeError / RangeError (NotImplementedError: the observers'
//             torch parity) whose message is qwasm's own
//             ("where: what", naming the function and argument or the node, operator and attribute);
//   'trap'    a WebAssembly.RuntimeError (memory access out of bounds, unreachable, ...);
//   'blow-up' an allocation that could not be made (wasm or JS memory exhausted);
//             (and I/O: a file or URL that could not be read, a plain Error naming the function and the path);
//   'raw'     anything else: an engine error escaping from inside qwasm (reading a property of undefined, an invalid
//             array length, a BigInt mixed with numbers, ...), a plain Error, or a non-Error value.
import { ModelFormatError, NotImplementedError, UnsupportedError } from '../../js/errors.js';

/** Messages V8 and Node give their own errors: never qwasm's. */
const ENGINE_MESSAGES = new RegExp([
  'Cannot read propert', 'Cannot set propert', 'is not a function', 'is not iterable', 'is not a constructor', 'is not defined',
  'Invalid array length', 'Invalid typed array length', 'Invalid string length', 'out of bounds', 'outside the bounds',
  'Cannot convert', 'Cannot mix BigInt', 'Do not know how to serialize', 'Maximum call stack', 'Reduce of empty array',
  'Array buffer allocation failed', 'Invalid DataView', 'must be an instance of', 'The encoded data was not valid',
  'object null is not', 'undefined is not', 'null is not', 'Invalid time value', 'digits argument',
  'Cannot create property', 'Cannot assign to read only', 'Cannot add property', 'Cannot destructure', 'Invalid code point',
  'Start offset', 'Invalid atomic',
].map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'));

/**
 * qwasm's TypeErrors and RangeErrors start by saying where: "fn: ...", "Model.run: input "x" ...",
 * 'Conv node "x": ...'. ModelFormatError and UnsupportedError are qwasm's by construction (they may quote the
 * message of a cause, e.g. protobuf's, after their own "where:").
 */
const WHERE = /^[\w.]+(?: (?:[\w.]+|"[^"]*"|\([^)]*\)))*: \S/;

/** A file or URL that could not be read: a plain Error naming the function and the path (I/O, not an argument). */
const IO = /^(?:loadModel|quantizeStatic|init|qwasm): could not (?:read|fetch) /;

export function classifyError(error) {
  if (error instanceof WebAssembly.RuntimeError) return 'trap';
  const message = String(error?.message ?? '');
  if (error?.constructor === Error && IO.test(message)) return 'named';
  if (/Array buffer allocation failed|out of wasm memory|Out of memory/i.test(message)) return 'blow-up';
  if (error instanceof ModelFormatError || error instanceof UnsupportedError) return 'named';
  if (!(error instanceof TypeError || error instanceof RangeError || error instanceof NotImplementedError)) return 'raw';
  return WHERE.test(message) && !ENGINE_MESSAGES.test(message) ? 'named' : 'raw';
}
