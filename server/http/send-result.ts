// An answer given as data (a status, headers, a body) sent as is: the handlers that return one
// (connectors/kit/oauth-install.ts's result page, and the CRM modules' intake to come) stay free of express.
import type { Response } from 'express';
import type { HttpResult } from '../../connectors/kit/oauth-install.ts';

export function sendResult(res: Response, result: HttpResult): void {
  res.status(result.status).set(result.headers).send(result.body);
}
