// Main thread. Compiles a route's schemas once and turns typebox errors into the contract's details list.
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { validationError, type ErrorDetail } from '../lib/errors.js';
import { flatStringConverter } from '../contract/convert-strings.js';

const MAX_DETAILS = 10;

export interface Validator {
  /** Returns the value typed, or throws VALIDATION_FAILED with details. */
  check(value: unknown): unknown;
}

export function compileValidator(schema: TSchema, options: { convertStrings: boolean }): Validator {
  const compiled: TypeCheck<TSchema> = TypeCompiler.Compile(schema);
  // Query strings and path params arrive as strings: convert "5" to 5 only where the schema wants a number.
  const convert = options.convertStrings ? flatStringConverter(schema) : (value: unknown) => value;
  return {
    check(value) {
      const candidate = convert(value);
      if (compiled.Check(candidate)) return candidate;
      throw validationError(collectDetails(compiled, candidate));
    },
  };
}

function collectDetails(compiled: TypeCheck<TSchema>, value: unknown): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const error of compiled.Errors(value)) {
    details.push({ path: error.path === '' ? '/' : error.path, message: error.message });
    if (details.length === MAX_DETAILS) break;
  }
  return details;
}
