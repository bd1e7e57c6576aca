// The live event stream (`WS /api/events`): reconnects with exponential back-off and resumes with
// `since=<last id seen>`, so an event that happened while the socket was down is replayed, not lost.
//
// The first connection asks for live events only (no `since`): the page shows what happens from now
// on, not the appliance's whole history. Every later connection resumes after the last id seen.

const DELAYS = [1000, 2000, 4000, 8000, 16000, 30000];
/** An open socket counts as healthy (the back-off starts over) once it has stayed up this long. */
const STABLE_MS = 5000;

export class EventStream {
  /**
   * @param {object} options
   * @param {(since: number | null) => string} options.url the socket URL for a resume point
   * @param {(event: object) => void} options.onEvent each event, in id order, each id once
   * @param {(state: string, detail?: {retryIn?: number}) => void} options.onState "connecting", "live", "reconnecting", "offline"
   * @param {() => Promise<boolean>} options.beforeRetry runs before each reconnection; false stops the stream (e.g. the token is no longer valid)
   */
  constructor({ url, onEvent, onState, beforeRetry }) {
    this.url = url;
    this.onEvent = onEvent;
    this.onState = onState;
    this.beforeRetry = beforeRetry ?? (async () => true);
    this.lastId = null;
    this.socket = null;
    this.timer = null;
    this.attempt = 0;
    this.stopped = true;
    this.openedAt = 0;
    this.wake = () => this.retryNow();
  }

  start() {
    if (!this.stopped) return;
    this.stopped = false;
    addEventListener('online', this.wake);
    document.addEventListener('visibilitychange', this.wake);
    this.connect();
  }

  stop() {
    this.stopped = true;
    removeEventListener('online', this.wake);
    document.removeEventListener('visibilitychange', this.wake);
    clearTimeout(this.timer);
    this.timer = null;
    if (this.socket) {
      const socket = this.socket;
      this.socket = null;
      socket.onclose = socket.onmessage = socket.onerror = socket.onopen = null;
      socket.close(1000, 'logged out');
    }
    this.onState('offline');
  }

  /** A waiting reconnection happens at once (the network came back, the page became visible again). */
  retryNow() {
    if (this.stopped || this.socket || document.visibilityState === 'hidden') return;
    clearTimeout(this.timer);
    this.timer = null;
    this.reconnect();
  }

  connect() {
    this.onState(this.lastId === null && this.attempt === 0 ? 'connecting' : 'reconnecting');
    let socket;
    try {
      socket = new WebSocket(this.url(this.lastId));
    } catch (error) {
      console.warn('events socket:', error);
      this.scheduleRetry();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      this.openedAt = Date.now();
      this.onState('live');
    };
    socket.onmessage = (message) => {
      if (typeof message.data !== 'string') return;
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        console.warn('events socket: not JSON:', message.data.slice(0, 80));
        return;
      }
      if (typeof event?.id === 'number') {
        if (this.lastId !== null && event.id <= this.lastId) return; // a replay overlapping what we have
        this.lastId = event.id;
      }
      this.onEvent(event);
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.stopped) return;
      if (this.openedAt && Date.now() - this.openedAt >= STABLE_MS) this.attempt = 0;
      this.openedAt = 0;
      this.scheduleRetry();
    };
  }

  scheduleRetry() {
    if (this.stopped) return;
    const base = DELAYS[Math.min(this.attempt, DELAYS.length - 1)];
    const delay = Math.round(base * (0.8 + Math.random() * 0.4)); // jitter: many pages must not return in step
    this.attempt += 1;
    this.onState('reconnecting', { retryIn: delay });
    this.timer = setTimeout(() => {
      this.timer = null;
      this.reconnect();
    }, delay);
  }

  async reconnect() {
    if (this.stopped || this.socket) return;
    let proceed;
    try {
      proceed = await this.beforeRetry();
    } catch {
      proceed = true; // the check itself failed (network down): keep trying
    }
    if (this.stopped || this.socket || this.timer) return;
    if (proceed) this.connect();
  }
}
