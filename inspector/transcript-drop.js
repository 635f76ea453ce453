// The DOM side of checking a transcript offline: a file picked or dropped anywhere on the page is
// sent to the gateway, which answers with validate's verdict on each line; the frames pane then
// shows those instead of the live frames until "Back to live frames".
import { transcriptSummary, transcriptUrl } from "./transcript.js";

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * @param {{ post: (url: string, body: string) => Promise<Response>, onShow: (transcript: { name: string, frames: any[] }) => void, onClear: () => void }} options
 */
export function setupTranscriptDrop(options) {
  const input = /** @type {HTMLInputElement} */ ($("transcript-file"));
  const dialect = /** @type {HTMLSelectElement} */ ($("transcript-dialect"));
  const state = $("transcript-state");
  const close = $("transcript-close");

  async function check(file) {
    state.dataset.state = "checking";
    state.textContent = `checking ${file.name}…`;
    let response;
    try {
      response = await options.post(transcriptUrl(dialect.value), await file.text());
    } catch (err) {
      return failed(file.name, err instanceof Error ? err.message : String(err));
    }
    let body;
    try {
      body = await response.json();
    } catch {}
    if (!response.ok) return failed(file.name, body?.message ?? `HTTP ${response.status}`);
    state.dataset.state = "shown";
    state.textContent = transcriptSummary(file.name, body);
    close.hidden = false;
    options.onShow({ name: file.name, frames: body.frames });
  }

  function failed(name, message) {
    state.dataset.state = "error";
    state.textContent = `${name}: ${message}`;
  }

  input.addEventListener("change", () => {
    const file = input.files?.[0];
    if (file) void check(file);
    input.value = "";
  });
  // A file dragged over the page is taken wherever it is dropped (not opened by the browser instead).
  document.addEventListener("dragover", (event) => {
    if (!event.dataTransfer?.types.includes("Files")) return;
    event.preventDefault();
    document.body.classList.add("dropping");
  });
  document.addEventListener("dragleave", (event) => {
    if (event.relatedTarget === null) document.body.classList.remove("dropping");
  });
  document.addEventListener("drop", (event) => {
    const file = event.dataTransfer?.files[0];
    document.body.classList.remove("dropping");
    if (!file) return;
    event.preventDefault();
    void check(file);
  });
  close.addEventListener("click", () => {
    close.hidden = true;
    state.dataset.state = "";
    state.textContent = "or drop one on the page";
    options.onClear();
  });
}
