// The console's form reader and its answer to a request it cannot read (faults.ts names the faults):
// a form over the size or field cap, in a charset or Content-Encoding the console does not read, or an
// address whose percent-encoding does not decode gets a console page with the fault's own 4xx that
// says what was wrong and that nothing changed.
import express from 'express';
import { type RequestFault, requestFaultOf } from '../faults.ts';
import { messagePage } from './components.tsx';
import type { Chrome } from './format.ts';

/** A console form is a few short fields; the largest (the playground's request) stays well under this. */
export const FORM_LIMIT_BYTES = 16 * 1024;
export const FORM_FIELD_LIMIT = 200;

/** The urlencoded form parser every console post uses, bounded. */
export function consoleForm(): ReturnType<typeof express.urlencoded> {
  return express.urlencoded({ extended: false, limit: FORM_LIMIT_BYTES, parameterLimit: FORM_FIELD_LIMIT });
}

function faultText(fault: RequestFault): { readonly title: string; readonly lines: readonly string[] } {
  if (fault.type === 'path.undecodable') {
    return { title: 'Address not understood', lines: ['Part of this address is percent-encoded in a way that does not decode. Check the link you followed.'] };
  }
  const unchanged = 'The form was not read; nothing was changed.';
  switch (fault.type) {
    case 'entity.too.large':
      return { title: 'Form too large', lines: [`The form is larger than the console accepts (${FORM_LIMIT_BYTES / 1024} KB).`, unchanged] };
    case 'parameters.too.many':
      return { title: 'Form too large', lines: [`The form has more than ${FORM_FIELD_LIMIT} fields.`, unchanged] };
    case 'charset.unsupported':
      return { title: 'Form not read', lines: ['The form must be sent as UTF-8.', unchanged] };
    case 'encoding.unsupported':
      return { title: 'Form not read', lines: ['The form was sent with a Content-Encoding the console does not read.', unchanged] };
    default:
      return { title: 'Form not read', lines: [`The form could not be read: ${fault.message}.`, unchanged] };
  }
}

/** The console router's last handler: a caller's fault as a page with its status; anything else goes on to the app's. */
export function consoleFaultHandler(chrome: Chrome): express.ErrorRequestHandler {
  return (error, _req, res, next) => {
    const fault = requestFaultOf(error);
    if (fault === undefined || res.headersSent) {
      next(error);
      return;
    }
    const { title, lines } = faultText(fault);
    res
      .status(fault.status)
      .type('html')
      .send(messagePage(chrome, title, lines, 'bad'));
  };
}
