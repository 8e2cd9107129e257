// Whether `flurry serve` shows its console: `auto` does when a token protects it or on loopback only
// (docs/console.md#who-can-see-it---token-and---console).

/** The decision and, when off, why (the 404's message; '' when on). */
export interface ConsoleAccess {
  readonly on: boolean;
  readonly why: string;
}

/** Whether `host` is a loopback address or name (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === '::ffff:127.0.0.1';
}

export function consoleAccess(setting: 'auto' | 'on' | 'off', host: string, token: string | undefined): ConsoleAccess {
  if (setting === 'on') return { on: true, why: '' };
  if (setting === 'off')
    return {
      on: false,
      why: 'the web console and its data routes (/v1/status, /v1/cluster, /v1/events) are off (--console off / FLURRY_CONSOLE=off); set it to auto or on',
    };
  if (token !== undefined || isLoopbackHost(host)) return { on: true, why: '' };
  return {
    on: false,
    why: `the web console and its data routes (/v1/status, /v1/cluster, /v1/events) are off: this service listens on ${host} (not loopback) without a token, and they would show its hosts, pids and registry to anyone who reaches the port; set --token (FLURRY_TOKEN) to protect them, or --console on to show them anyway (see docs/console.md)`,
  };
}
