// The alarm of a new alert: three tones (one oscillator, so one sound is
// one start) and a browser notification when the user allowed them.
import { S } from "./state.js";

const TONES = [880, 660, 880], STEP = 0.25;

// unlock makes the audio context inside a user's gesture (the login), so
// that alerts can beep later.
export function unlock() {
  try { S.audio = S.audio || new (window.AudioContext || window.webkitAudioContext)(); } catch (e) { /* no audio */ }
}

export function sound() {
  try {
    unlock();
    const ctx = S.audio, t = ctx.currentTime;
    const o = ctx.createOscillator(), g = ctx.createGain();
    o.type = "sine";
    g.gain.setValueAtTime(0.0001, t);
    TONES.forEach((f, i) => {
      const at = t + i * STEP;
      o.frequency.setValueAtTime(f, at);
      g.gain.setValueAtTime(0.0001, at);
      g.gain.exponentialRampToValueAtTime(0.3, at + 0.02);
      g.gain.exponentialRampToValueAtTime(0.0001, at + 0.22);
    });
    o.connect(g).connect(ctx.destination);
    o.start(t); o.stop(t + TONES.length * STEP);
  } catch (e) { /* no audio device: the toast still shows */ }
}

export function notification(title, body) {
  if (!("Notification" in window) || Notification.permission !== "granted") return;
  try { new Notification(title, { body, icon: "/static/icon.svg", tag: "sossego-alerta" }); } catch (e) { /* ignore */ }
}
