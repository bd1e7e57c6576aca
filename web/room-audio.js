// Live audio of a drop-in room (`WS /rooms/{id}/audio`, docs/rooms.md): the microphone, with the browser's echo
// cancellation and noise suppression on, encoded to 20 ms Opus frames by WebCodecs and sent; the room's mix
// (everyone but this member, mixed by the appliance) received, decoded by WebCodecs and played.
//
// Each binary message is one frame: version (1), codec (1 = Opus), a 32-bit sequence number and a 32-bit
// millisecond timestamp (both big-endian), then one Opus packet. Muted, the page keeps sending frames of
// silence, so the others' jitter buffers stay primed and nobody hears a half-second of concealment.

import { OUTPUT_RATE } from './downsampler.js';

const HEADER = 10;
const VERSION = 1;
const CODEC_OPUS = 1;
/** How far ahead of the audio clock received sound is scheduled: enough to ride out a late message. */
const PLAYOUT_LEAD_S = 0.06;
/** If playback falls this far behind or ahead, it starts over at the lead (a stall, a tab in the background). */
const PLAYOUT_RESET_S = 0.4;

/** Whether this browser can take part in a room's audio: WebCodecs with Opus, Web Audio, a microphone. */
export async function roomAudioAvailability() {
  if (!navigator.mediaDevices?.getUserMedia) return 'This browser cannot capture the microphone.';
  if (!window.AudioContext) return 'This browser has no Web Audio.';
  if (!window.AudioEncoder || !window.AudioDecoder) return 'This browser has no WebCodecs (Chromium 94 or later has it): the room is silent here.';
  if (!window.isSecureContext) return 'The microphone needs HTTPS (or localhost).';
  try {
    const config = { codec: 'opus', sampleRate: OUTPUT_RATE, numberOfChannels: 1 };
    const [encoder, decoder] = await Promise.all([AudioEncoder.isConfigSupported(config), AudioDecoder.isConfigSupported(config)]);
    if (!encoder.supported || !decoder.supported) return 'This browser cannot encode or decode Opus.';
  } catch (error) {
    return `This browser cannot use Opus (${error.message}).`;
  }
  return null;
}

/** One frame of the audio socket: the header and the packet. */
export function encodeFrame(sequence, timestamp, packet) {
  const frame = new Uint8Array(HEADER + packet.byteLength);
  const view = new DataView(frame.buffer);
  view.setUint8(0, VERSION);
  view.setUint8(1, CODEC_OPUS);
  view.setUint32(2, sequence >>> 0);
  view.setUint32(6, timestamp >>> 0);
  frame.set(packet, HEADER);
  return frame;
}

/** The fields of a received frame, or null for one this page does not understand. */
export function decodeFrame(buffer) {
  if (buffer.byteLength <= HEADER) return null;
  const view = new DataView(buffer);
  if (view.getUint8(0) !== VERSION || view.getUint8(1) !== CODEC_OPUS) return null;
  return { sequence: view.getUint32(2), timestamp: view.getUint32(6), packet: new Uint8Array(buffer, HEADER) };
}

export class RoomAudio {
  /**
   * @param {object} options
   * @param {string} options.url the audio socket's URL (with the person's token)
   * @param {(state: string, detail?: string) => void} options.onState "connecting", "live", "closed" (detail: why)
   * @param {(error: Error) => void} options.onError a problem worth showing (the socket stays up where it can)
   */
  constructor({ url, onState, onError }) {
    this.url = url;
    this.onState = onState;
    this.onError = onError;
    this.muted = false;
    this.sequence = 0;
    this.stopped = false;
    /** What the test and the curious can read: frames sent and received, and the loudness of what is heard. */
    this.stats = { sent: 0, received: 0, decoded: 0, badFrames: 0, heardPeak: 0, heardRMS: 0 };
  }

  async start() {
    this.onState('connecting');
    this.context = new AudioContext({ latencyHint: 'interactive' });
    // The browser's own processing: echo cancellation (the far end's voice as it comes out of this device's
    // speaker), noise suppression and level control. docs/rooms.md says what that does and does not cancel.
    this.stream = await navigator.mediaDevices.getUserMedia({
      audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true },
    });
    if (this.stopped) return this.release();
    await this.context.audioWorklet.addModule(new URL('./pcm-worklet.js', import.meta.url));
    if (this.stopped) return this.release();
    this.source = this.context.createMediaStreamSource(this.stream);
    this.capture = new AudioWorkletNode(this.context, 'hark-pcm-capture', { numberOfInputs: 1, numberOfOutputs: 0 });
    this.source.connect(this.capture);
    this.playhead = 0;

    this.encoder = new AudioEncoder({
      output: (chunk) => this.send(chunk),
      error: (error) => this.onError(new Error(`The microphone's sound cannot be encoded: ${error.message}`)),
    });
    this.encoder.configure({
      codec: 'opus', sampleRate: OUTPUT_RATE, numberOfChannels: 1, bitrate: 24000,
      opus: { frameDuration: 20000, useinbandfec: true, complexity: 5 },
    });
    this.decoder = new AudioDecoder({
      output: (data) => this.play(data),
      error: (error) => this.onError(new Error(`The room's sound cannot be decoded: ${error.message}`)),
    });
    this.decoder.configure({ codec: 'opus', sampleRate: OUTPUT_RATE, numberOfChannels: 1 });

    this.socket = new WebSocket(this.url);
    this.socket.binaryType = 'arraybuffer';
    this.socket.onopen = () => this.onState('live');
    this.socket.onmessage = (event) => this.receive(event.data);
    this.socket.onclose = (event) => {
      const why = event.code === 4403 ? 'You left the room, or it closed.'
        : event.code === 4409 ? 'This room is open in another tab or device.'
          : event.code === 1006 ? 'The connection to the appliance was lost.'
            : event.reason || `closed (${event.code})`;
      this.stop();
      this.onState('closed', why);
    };
    let timestamp = 0;
    this.capture.port.onmessage = (event) => {
      if (!(event.data instanceof Int16Array) || this.encoder.state !== 'configured') return;
      const samples = this.muted ? new Int16Array(event.data.length) : event.data;
      this.encoder.encode(new AudioData({
        format: 's16', sampleRate: OUTPUT_RATE, numberOfFrames: samples.length, numberOfChannels: 1,
        timestamp, data: samples,
      }));
      timestamp += Math.round((samples.length * 1e6) / OUTPUT_RATE);
    };
    return undefined;
  }

  send(chunk) {
    if (this.socket?.readyState !== WebSocket.OPEN) return;
    // A socket that cannot keep up (a slow network) loses this frame rather than queueing seconds of delay.
    if (this.socket.bufferedAmount > 16 * 1024) return;
    const packet = new Uint8Array(chunk.byteLength);
    chunk.copyTo(packet);
    this.socket.send(encodeFrame(this.sequence++, Math.round(performance.now()), packet));
    this.stats.sent += 1;
  }

  receive(data) {
    if (typeof data === 'string') {
      // The server names what it refused (a bad frame); the room goes on.
      try {
        const error = JSON.parse(data)?.error;
        if (error) {
          this.stats.badFrames += 1;
          this.onError(new Error(`The appliance refused a frame: ${error.message ?? error.code}`));
        }
      } catch { /* not JSON: nothing to show */ }
      return;
    }
    const frame = decodeFrame(data);
    if (!frame || this.decoder?.state !== 'configured') return;
    this.stats.received += 1;
    this.decoder.decode(new EncodedAudioChunk({ type: 'key', timestamp: frame.sequence * 20000, data: frame.packet }));
  }

  play(data) {
    this.stats.decoded += 1;
    const count = data.numberOfFrames;
    const rate = data.sampleRate; // WebCodecs may decode Opus at 48 kHz whatever the packet's rate
    const samples = new Float32Array(count);
    data.copyTo(samples, { planeIndex: 0, format: 'f32-planar' });
    data.close();
    let peak = 0;
    let energy = 0;
    for (const s of samples) {
      peak = Math.max(peak, Math.abs(s));
      energy += s * s;
    }
    this.stats.heardPeak = Math.max(this.stats.heardPeak, peak);
    this.stats.heardRMS = Math.sqrt(energy / Math.max(count, 1));
    const buffer = this.context.createBuffer(1, count, rate);
    buffer.copyToChannel(samples, 0);
    const node = this.context.createBufferSource();
    node.buffer = buffer;
    node.connect(this.context.destination);
    const now = this.context.currentTime;
    if (this.playhead < now || this.playhead > now + PLAYOUT_RESET_S) this.playhead = now + PLAYOUT_LEAD_S;
    node.start(this.playhead);
    this.playhead += count / rate;
  }

  setMuted(muted) {
    this.muted = muted;
  }

  stop() {
    if (this.stopped) return;
    this.stopped = true;
    if (this.socket) {
      const socket = this.socket;
      this.socket = null;
      socket.onclose = socket.onmessage = socket.onopen = null;
      if (socket.readyState <= WebSocket.OPEN) socket.close(1000, 'left');
    }
    this.release();
  }

  release() {
    if (this.capture?.port) this.capture.port.onmessage = null;
    this.source?.disconnect();
    this.stream?.getTracks().forEach((track) => track.stop());
    for (const codec of [this.encoder, this.decoder]) {
      if (codec && codec.state !== 'closed') codec.close();
    }
    this.context?.close().catch(() => {});
  }
}
