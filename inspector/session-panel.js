// The inspector page's session panel, the DOM side: pick a session, see its events with the frames
// each became on every connection, its approvals, questions and plans, which an operator may answer,
// and the receipt of every command-tool call (to an operator or the session's owner).
// The grouping is timeline.js's, the receipts' words receipts.js's (no DOM); the data comes from
// /inspector/api/sessions… and the feed.
import { receiptHead, stepWords, finished } from "./receipts.js";
import { directionWord, verdictText } from "./render.js";
import { buildTimeline, interactionsOf, sessionIdsOf } from "./timeline.js";

/** Events drawn at once (the newest). */
const MAX_EVENTS = 300;
const REFRESH_MS = 150;
/** Operators' answers the page holds (the gateway keeps as many). */
const MAX_DECISIONS = 200;
/** What the panel calls each kind of interaction. */
const KIND_WORDS = { approval: "approval", user_input: "question", plan: "plan" };

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const clock = (iso) => (iso ? iso.slice(11, 23) : "");
const short = (value, max = 160) => {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text === undefined ? "" : text.length > max ? `${text.slice(0, max)}…` : text;
};

/**
 * @param {{ el: (tag: string, attributes?: object, ...children: any[]) => HTMLElement, token: () => string | undefined, frames: () => any[], queueDraw: () => void }} page
 */
export function sessionPanel(page) {
  const { el } = page;
  /** Sessions the gateway serves, from the API. */
  let served = [];
  let picked = "";
  /** The picked session's events and pending interactions, from the API. */
  let view = { events: [], pending: [], plans: [], newestSeq: 0 };
  let decisions = [];
  /** The picked session's receipts ({receipts}), or why they are not shown ({refused}). */
  let receipts = { receipts: [] };
  let receiptsTimer;
  /** Reads of the receipts asked for: only the newest one's answer is shown (an older one may come back last). */
  let receiptReads = 0;
  let csrf;
  let refreshTimer;
  let listTimer;
  /** What each interaction's last answer from the page was refused with. */
  const refusals = new Map();
  /** What was drawn last, so a redraw that changes nothing leaves the DOM (and what is being typed) alone. */
  const drawn = { picker: "", timeline: "", approvals: "", receipts: "", subagents: "" };

  function request(url, init = {}) {
    const headers = { ...(init.headers ?? {}) };
    const t = page.token();
    if (t) headers.authorization = `Bearer ${t}`;
    return fetch(url, { ...init, headers, cache: "no-store" });
  }

  async function loadSessions() {
    const response = await request("/inspector/api/sessions");
    if (!response.ok) return;
    served = (await response.json()).sessions;
    page.queueDraw();
  }

  async function loadView() {
    const id = picked;
    if (!id) return;
    const response = await request(`/inspector/api/sessions/${encodeURIComponent(id)}`);
    if (id !== picked) return;
    view = response.ok ? await response.json() : { events: [], pending: [], plans: [], newestSeq: 0 };
    page.queueDraw();
  }

  async function loadReceipts() {
    const id = picked;
    if (!id) return;
    const read = ++receiptReads;
    const response = await request(`/inspector/api/sessions/${encodeURIComponent(id)}/receipts`);
    const body = await response.json().catch(() => ({}));
    if (id !== picked || read !== receiptReads) return;
    // Not the session's owner (nor an operator): the panel says so, and shows none of them.
    receipts = response.ok ? { receipts: body.receipts ?? [] } : { refused: body.message ?? `HTTP ${response.status}` };
    page.queueDraw();
  }

  const later = (timer, fn) => {
    clearTimeout(timer);
    return setTimeout(fn, REFRESH_MS);
  };
  const refresh = () => (refreshTimer = later(refreshTimer, loadView));
  const refreshList = () => (listTimer = later(listTimer, loadSessions));
  const refreshReceipts = () => (receiptsTimer = later(receiptsTimer, loadReceipts));

  function onEvent(type, data) {
    if (type === "snapshot") {
      decisions = data.decisions ?? [];
      refreshList();
      refresh();
      refreshReceipts();
    } else if (type === "receipt") {
      // A step was added to one of the session's receipts: read them again.
      if (data.receipt.sessionId === picked) refreshReceipts();
    } else if (type === "frame") {
      const cause = data.frame.cause;
      if (!cause) return;
      if (!served.some((s) => s.sessionId === cause.sessionId)) refreshList();
      if (cause.sessionId === picked && (cause.interactionId !== undefined || (cause.seq ?? 0) > view.newestSeq)) refresh();
    } else if (type === "decision") {
      decisions.push(data.decision);
      if (decisions.length > MAX_DECISIONS) decisions.shift();
      if (data.decision.sessionId === picked) refresh();
    }
  }

  $("session-pick").addEventListener("change", (event) => {
    picked = /** @type {HTMLSelectElement} */ (event.target).value;
    view = { events: [], pending: [], plans: [], newestSeq: 0 };
    receipts = { receipts: [] };
    refusals.clear();
    void loadView();
    void loadReceipts();
    page.queueDraw();
  });

  function draw() {
    const frames = page.frames();
    drawPicker(frames);
    if (!picked) {
      if (drawn.timeline !== "") $("timeline").replaceChildren();
      if (drawn.approvals !== "") $("approvals").replaceChildren();
      if (drawn.receipts !== "") $("receipts").replaceChildren();
      if (drawn.subagents !== "") $("subagents").replaceChildren();
      drawn.timeline = drawn.approvals = drawn.receipts = drawn.subagents = "";
      return;
    }
    const rows = buildTimeline(picked, view.events, frames).slice(-MAX_EVENTS);
    const timelineKey = `${picked}|${rows.length}|${rows.map((r) => `${r.seq}:${r.frames.length}`).join(",")}`;
    if (timelineKey !== drawn.timeline) {
      drawn.timeline = timelineKey;
      $("timeline").replaceChildren(...rows.map(eventRow));
    }
    const pendingPlans = (view.plans ?? []).map((p) => ({ id: p.id, kind: "plan", payload: { id: p.id, plan: p.plan } }));
    const items = interactionsOf(picked, view.events, [...view.pending, ...pendingPlans], frames, decisions);
    const approvalsKey = JSON.stringify(items.map((i) => [i.id, i.pending, i.asked.length, i.withdrawn.length, i.answers.length, i.outcome?.status, refusals.get(i.id)]));
    if (approvalsKey !== drawn.approvals) {
      drawn.approvals = approvalsKey;
      $("approvals").replaceChildren(...(items.length ? items.map(interactionBox) : [el("p", { className: "empty" }, "No approvals, questions or plans in this session.")]));
    }
    const receiptsKey = JSON.stringify(receipts);
    if (receiptsKey !== drawn.receipts) {
      drawn.receipts = receiptsKey;
      $("receipts").replaceChildren(
        ...(receipts.refused
          ? [el("p", { className: "empty", "data-refused": "" }, `Receipts not shown: ${receipts.refused}`)]
          : receipts.receipts.length
            ? receipts.receipts.map(receiptBox)
            : [el("p", { className: "empty" }, "No command-tool calls in this session yet.")]),
      );
    }
    const agents = view.subagents ?? [];
    const agentsKey = JSON.stringify(agents);
    if (agentsKey !== drawn.subagents) {
      drawn.subagents = agentsKey;
      $("subagents").replaceChildren(...(agents.length ? agents.map(subagentBox) : [el("p", { className: "empty" }, "No sub-agents in this session.")]));
    }
  }

  /** One call's receipt: what was called under which rule, and each step of its lifecycle. */
  function receiptBox(receipt) {
    const decided = receipt.steps.find((step) => step.step === "decided");
    return el(
      "div",
      { className: `receipt ${finished(receipt) ? "finished" : "open"} ${decided?.outcome ?? ""}`.trim(), "data-call": receipt.callId, "data-interaction": receipt.interactionId, "data-outcome": decided?.outcome },
      el("div", { className: "receipt-head" }, receiptHead(receipt)),
      el("ol", { className: "steps" }, ...receipt.steps.map((step) => el("li", { "data-step": step.step }, stepWords(step)))),
    );
  }

  /** One sub-agent: title, state (with its answer or failure), tokens and cost, what it did lately. */
  function subagentBox(agent) {
    const state = agent.state === "running" && agent.interruptRequested ? "running (interrupt requested)" : agent.state;
    const outcome = agent.response !== undefined ? `Answer: ${short(agent.response)}` : agent.error !== undefined ? `Why: ${short(agent.error)}` : "";
    return el(
      "div",
      { className: `subagent ${agent.state}`, "data-agent": agent.agentId },
      el("div", {}, el("strong", {}, agent.title), ` — ${state} · ${agent.model} · ${agent.inputTokens} in / ${agent.outputTokens} out · $${agent.cost.toFixed(6)}`),
      outcome ? el("div", {}, outcome) : "",
      el("div", { className: "empty" }, `${agent.activityCount} activit${agent.activityCount === 1 ? "y" : "ies"} kept`),
      el("ul", {}, ...agent.recentActivities.map((text) => el("li", {}, text))),
    );
  }

  function drawPicker(frames) {
    const ids = [...new Set([...served.map((s) => s.sessionId), ...sessionIdsOf(frames)])];
    const key = ids.join(",");
    if (key === drawn.picker) return;
    drawn.picker = key;
    const select = /** @type {HTMLSelectElement} */ ($("session-pick"));
    const tenantOf = new Map(served.map((s) => [s.sessionId, s.tenant]));
    select.replaceChildren(
      el("option", { value: "" }, "— pick a session —"),
      ...ids.map((id) => el("option", { value: id, selected: id === picked ? "selected" : undefined }, tenantOf.get(id) ? `${id} (${tenantOf.get(id)})` : id)),
    );
    select.value = picked;
  }

  function eventRow(row) {
    const payload = row.payload !== undefined ? short(row.payload) : row.preview ? short(row.preview) : "";
    return el(
      "li",
      { className: "event", "data-seq": row.seq, "data-type": row.type },
      el("div", { className: "event-head" }, el("span", { className: "seq" }, `#${row.seq}`), " ", el("strong", {}, row.type), " ", el("code", {}, payload)),
      el(
        "ul",
        { className: "caused" },
        ...row.frames.map((frame) =>
          el(
            "li",
            { className: `caused-frame ${frame.verdict.status}`, "data-dialect": frame.dialect, "data-connection": frame.connection, "data-method": frame.method ?? frame.kind },
            `${clock(frame.time)} ${frame.connection} ${directionWord(frame.direction)} ${frame.kind} ${frame.method ?? ""}${frame.id !== undefined ? ` #${frame.id}` : ""} — ${verdictText(frame.verdict)}`,
          ),
        ),
      ),
    );
  }

  function interactionBox(item) {
    const status = item.pending ? "pending" : item.outcome?.status ?? "settled";
    const about =
      item.kind === "approval"
        ? `${item.payload?.toolName ?? "?"} ${short(item.payload?.args ?? {}, 120)}`
        : item.kind === "plan"
          ? short(item.payload?.plan ?? "", 160)
          : short(item.payload?.prompt ?? item.payload ?? "", 160);
    const box = el(
      "div",
      { className: `interaction ${status}`, "data-interaction": item.id, "data-status": status, "data-kind": item.kind },
      el("div", { className: "interaction-head" }, el("strong", {}, item.id), ` ${KIND_WORDS[item.kind] ?? "question"}: ${about} — `, el("span", { className: "status" }, status)),
      el(
        "ul",
        { className: "asked" },
        ...(item.asked.length ? item.asked : [undefined]).map((frame) =>
          frame
            ? el("li", { "data-connection": frame.connection, "data-dialect": frame.dialect }, `${clock(frame.time)} asked ${frame.connection} (${frame.dialect}) with ${frame.method}`)
            : el("li", { className: "empty" }, "no connection was asked directly (clients see the event; an operator or interaction/* may answer)"),
        ),
        ...item.withdrawn.map((frame) => el("li", { className: "withdrawn", "data-connection": frame.connection }, `${clock(frame.time)} withdrawn from ${frame.connection} (${frame.dialect}) with ${frame.method}`)),
      ),
      el("ul", { className: "answers" }, ...item.answers.map((a) => el("li", { "data-by": a.by }, `${clock(a.time)} ${a.by} (${a.dialect}): ${a.words}`))),
    );
    if (item.outcome) box.append(el("div", { className: "outcome" }, `ended ${item.outcome.status}${item.outcome.scope ? ` (${item.outcome.scope})` : ""}${item.outcome.feedback ? `: ${item.outcome.feedback}` : item.outcome.reason ? `: ${item.outcome.reason}` : ""} — event #${item.outcome.seq}`));
    if (item.pending) box.append(answerForm(item));
    const refusal = refusals.get(item.id);
    if (refusal) box.append(el("div", { className: "refusal", role: "alert" }, refusal));
    return box;
  }

  function answerForm(item) {
    const decides = item.kind === "approval" || item.kind === "plan";
    const text = el("input", { type: "text", className: decides ? "feedback" : "response", placeholder: decides ? "feedback (with Reject)" : "answer", spellcheck: "false" });
    const button = (label, action, body) => {
      const b = el("button", { type: "button", "data-action": action }, label);
      b.addEventListener("click", () => void answer(item.id, body()));
      return b;
    };
    const value = () => /** @type {HTMLInputElement} */ (text).value;
    if (item.kind === "plan") {
      return el(
        "div",
        { className: "answer-form" },
        button("Approve the plan", "approve", () => ({ action: "approve" })),
        text,
        button("Reject", "reject", () => (value() ? { action: "reject", feedback: value() } : { action: "reject" })),
      );
    }
    if (item.kind === "approval") {
      return el(
        "div",
        { className: "answer-form" },
        button("Approve once", "approve", () => ({ action: "approve", scope: "once" })),
        button("Approve for the session", "approve-session", () => ({ action: "approve", scope: "session" })),
        text,
        button("Reject", "reject", () => (value() ? { action: "reject", feedback: value() } : { action: "reject" })),
      );
    }
    const options = Array.isArray(item.payload?.options) ? item.payload.options.filter((o) => typeof o === "string") : [];
    return el(
      "div",
      { className: "answer-form" },
      ...options.map((option) => button(option, "respond-option", () => ({ action: "respond", response: option }))),
      text,
      button("Answer", "respond", () => ({ action: "respond", response: value() })),
      button("Decline", "decline", () => ({ action: "decline" })),
    );
  }

  async function answer(interactionId, body, retried = false) {
    const session = picked;
    try {
      if (!csrf) {
        const got = await request("/inspector/api/csrf");
        if (!got.ok) throw new Error((await got.json()).message ?? `HTTP ${got.status}`);
        csrf = await got.json();
      }
      const response = await request(`/inspector/api/sessions/${encodeURIComponent(session)}/interactions/${encodeURIComponent(interactionId)}`, {
        method: "POST",
        headers: { "content-type": "application/json", [csrf.header]: csrf.token },
        body: JSON.stringify(body),
      });
      if (response.ok) refusals.delete(interactionId);
      else {
        const refusal = await response.json().catch(() => ({}));
        // The gateway restarted since the token was read: read it again, once.
        if (refusal.error === "bad_csrf_token" && !retried) {
          csrf = undefined;
          return answer(interactionId, body, true);
        }
        refusals.set(interactionId, refusal.message ?? `HTTP ${response.status}`);
      }
    } catch (error) {
      refusals.set(interactionId, error instanceof Error ? error.message : String(error));
    }
    refresh();
    page.queueDraw();
  }

  return { onEvent, draw };
}
