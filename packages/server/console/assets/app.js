// The console's entry: asks for the token when the service wants one, then follows the
// live stream and renders. Read-only: every request is a GET of this service.
import { ApiError, connect, getJson, setToken, token } from './api.js';
import { rateChart } from './chart.js';
import { renderCluster, renderClusterError, renderStatus, tickDeadline } from './render.js';
import { setupTools } from './tools.js';

const conn = document.getElementById('conn');
function state(kind, message) {
  if (conn.textContent !== message) conn.textContent = message;
  conn.className = `conn ${kind}`;
}

function askToken(message) {
  document.getElementById('content').hidden = true;
  const form = document.getElementById('login');
  form.hidden = false;
  document.getElementById('login-error').textContent = message;
  state('bad', 'Token needed');
  const input = document.getElementById('token-input');
  input.focus();
}

let stop = null;
let chart = null;

async function start() {
  let first;
  try {
    first = await getJson('/v1/status');
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      askToken(token() ? `The token was refused: ${e.message}` : '');
      return;
    }
    state('bad', `Cannot read the status: ${e.code}: ${e.message}`);
    setTimeout(start, 5000);
    return;
  }
  document.getElementById('login').hidden = true;
  document.getElementById('content').hidden = false;
  if (chart === null) {
    chart = rateChart(document.getElementById('rate'));
    setInterval(tickDeadline, 250);
  }
  renderStatus(first, chart);
  stop = connect({
    status: (s) => renderStatus(s, chart),
    cluster: (c) => renderCluster(c),
    clusterError: (e) => renderClusterError(e),
    state,
    failure: (e, waitS) => {
      if (e instanceof ApiError && e.status === 401) {
        stop?.();
        askToken(`The token was refused: ${e.message}`);
      } else state('bad', `Live stream cut; service unreachable (${e.code}); reconnecting in ${waitS} s`);
    },
  });
}

document.getElementById('login').addEventListener('submit', (ev) => {
  ev.preventDefault();
  setToken(document.getElementById('token-input').value.trim());
  void start();
});

setupTools();
void start();
