// jsforce, loaded when this process first talks to Salesforce: loading it takes about 0.4 s of CPU,
// which every process start (each CLI command, each server) would otherwise pay with no org connected.
const importJsforce = () => import('jsforce');
let loading: ReturnType<typeof importJsforce> | undefined;

export function loadJsforce(): ReturnType<typeof importJsforce> {
  loading ??= importJsforce();
  return loading;
}
