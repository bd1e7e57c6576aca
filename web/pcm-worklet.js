// The AudioWorklet side of push-to-talk: runs on the audio thread, turns each 128-sample render quantum
// into 16 kHz s16 samples and posts them to the page in 40 ms chunks (640 samples, 1280 bytes), small
// enough for live partial transcripts, large enough not to flood the socket with tiny messages.
//
// The page posts "flush" when the button is released; the worklet answers with what it still holds and
// then {flushed: true}, so the page sends {"type": "end"} only after the last samples.

import { Downsampler, OUTPUT_RATE, mixToMono } from './downsampler.js';

const CHUNK = OUTPUT_RATE / 25;

class PCMCaptureProcessor extends AudioWorkletProcessor {
  constructor() {
    super();
    // `sampleRate` is the AudioWorkletGlobalScope's: the context's rate.
    this.downsampler = new Downsampler(sampleRate);
    this.chunk = new Int16Array(CHUNK);
    this.filled = 0;
    this.port.onmessage = (event) => {
      if (event.data === 'flush') {
        this.post(this.filled);
        this.port.postMessage({ flushed: true });
      }
    };
  }

  post(count) {
    if (count === 0) return;
    const samples = this.chunk.slice(0, count);
    this.port.postMessage(samples, [samples.buffer]);
    this.filled = 0;
  }

  process(inputs) {
    const channels = inputs[0];
    if (channels && channels.length > 0) {
      const pcm = this.downsampler.process(mixToMono(channels));
      for (let i = 0; i < pcm.length; i++) {
        this.chunk[this.filled++] = pcm[i];
        if (this.filled === CHUNK) this.post(CHUNK);
      }
    }
    return true;
  }
}

registerProcessor('hark-pcm-capture', PCMCaptureProcessor);
