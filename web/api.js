// The HTTP API as the page uses it: the token (kept for this tab only), JSON requests whose
// refusals become errors with the API's one-line message, and the event stream read with fetch
// (EventSource cannot send the Authorization header), resumed from the last revision it saw.

const TOKEN_KEY = 'snn.token';

export function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }
export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value); else sessionStorage.removeItem(TOKEN_KEY);
}

export class ApiError extends Error {
  constructor(status, message, code) { super(message); this.status = status; this.code = code; }
}

function headers(extra = {}) {
  const out = { ...extra };
  if (token()) out.Authorization = 'Bearer ' + token();
  return out;
}

// `path` with its query parameters (those not undefined or empty).
export function withQuery(path, query = {}) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  }
  const text = params.toString();
  return text ? path + '?' + text : path;
}

export async function api(path, { method = 'GET', body, contentType, signal } = {}) {
  // A form (a job with its model) sets its own multipart type, boundary and all.
  const extra = body === undefined || body instanceof FormData
    ? {} : { 'Content-Type': contentType || 'application/json' };
  let res;
  try {
    res = await fetch(path, { method, body, signal, headers: headers(extra), cache: 'no-store' });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'the master cannot be reached (' + e.message + ')', 'UNAVAILABLE');
  }
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!res.ok) {
    throw new ApiError(res.status, (data && data.error) || `${res.status} ${res.statusText}`,
                       data && data.code);
  }
  return data;
}

// Follows GET /v1/events: onEvent(type, event) for each, onState(text) when the stream opens,
// fails or reconnects. Returns a function that stops it.
export function watchEvents(onEvent, onState) {
  const abort = new AbortController();
  let lastId = '';
  let stopped = false;
  const loop = async () => {
    let delay = 1000;
    while (!stopped) {
      try {
        const extra = { Accept: 'text/event-stream' };
        if (lastId) extra['Last-Event-ID'] = lastId;
        const res = await fetch('/v1/events', { headers: headers(extra), signal: abort.signal,
                                                cache: 'no-store' });
        if (!res.ok) {
          const body = await res.json().catch(() => null);
          onState('Live updates refused: ' + ((body && body.error) || res.status), false);
          if (res.status === 401 || res.status === 403) return;
        } else {
          onState('Live', true);
          delay = 1000;
          await readStream(res.body, (id, type, data) => {
            if (id) lastId = id;
            onEvent(type, data);
          });
        }
      } catch (e) {
        if (stopped) return;
      }
      onState('Reconnecting…', false);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 30000);
    }
  };
  loop();
  return () => { stopped = true; abort.abort(); };
}

// Server-Sent Events framing: blocks end at a blank line; "id:", "event:", "data:" fields;
// lines starting with ':' are comments (keepalives).
async function readStream(body, dispatch) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      let id = '', type = 'message';
      const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'id') id = value;
        else if (field === 'event') type = value;
        else if (field === 'data') data.push(value);
      }
      if (data.length) dispatch(id, type, JSON.parse(data.join('\n')));
    }
  }
}
