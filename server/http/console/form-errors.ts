// What a refused console form or filter shows: one message per field, beside that field, and one for
// the form as a whole under `form`. The first message of each wins: it names what to fix first.
import { z } from 'zod';

export type FieldErrors = Readonly<Record<string, string>>;

/** A zod refusal as the message for each field it names (`form` for the form as a whole). */
export function formErrors(error: z.ZodError): Record<string, string> {
  const flat = z.flattenError(error);
  const errors: Record<string, string> = {};
  for (const [field, messages] of Object.entries(flat.fieldErrors)) {
    const first = Array.isArray(messages) ? messages[0] : undefined;
    if (typeof first === 'string') errors[field] = first;
  }
  const form = flat.formErrors[0];
  if (form !== undefined) errors.form ??= form;
  return errors;
}
