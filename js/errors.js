// The errors qwasm throws besides TypeError and RangeError. A leaf: every layer may import it.

/** A malformed or inconsistent model file: the message names the tensor, node or attribute at fault. */
export class ModelFormatError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'ModelFormatError';
  }
}

/** A valid request qwasm does not implement (an operator, an attribute value, a semantics form). */
export class UnsupportedError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'UnsupportedError';
  }
}

/** torch raises NotImplementedError for option combinations an observer class does not support; so do we. */
export class NotImplementedError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'NotImplementedError';
  }
}
