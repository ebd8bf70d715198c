"""The conversation: sending, the messages typed ahead, edits, and each answer's life from its
start to its end or failure (saved as it streams, then traced and measured)."""

from __future__ import annotations

from spectui.chat.panel import PanelState
from spectui.chat.persistence import Persistence
from spectui.chat.state import ChatState
from spectui.chat.streaming import TurnJob
from spectui.chat.turn import Baselines, Growth, LiveTurn
from spectui.chat.updates import (
    AnswerEnded,
    AnswerStarted,
    AnswerUpdated,
    ChatShown,
    ComposeText,
    Generate,
    MessageAdded,
    MessagesRemoved,
    OutboxChanged,
    PanelChanged,
    StatusLine,
)
from spectui.engine.events import Event, PromptDone, Round, TurnEnd, TurnStart
from spectui.engine.interface import ChatSession, GenerationLimits, chat_messages
from spectui.store import chat_types
from spectui.words import plural

GENERATING = StatusLine("generating")
# a prompt this long takes seconds before the first token (a reopened chat is read whole): said
READ_SAID = 256
STOPPING = StatusLine("stopping")


class Conversation:
    def __init__(self, state: ChatState, persistence: Persistence):
        self.state = state
        self.persistence = persistence
        self.turn: LiveTurn | None = None  # the answer streaming now, or the last one
        self.queued: list[str] = []  # messages typed while the chat was busy, oldest first
        self.editing: chat_types.Message | None = None  # the sent message the box holds for resending
        self.baselines = Baselines()
        self.answered: list[LiveTurn] = []  # this chat's answers since it was opened: their rounds, for the inspector
        self._cut: tuple[str, int] = ("", 0)  # (chat, messages its prompt leaves out): said when it grows
        self._said: set[str] = set()  # a llama-server's notes (not speculating, no --metrics): each said once
        self._job: TurnJob | None = None  # the streaming answer's worker job (`stop` ends it)

    def show(self, chat: chat_types.Chat) -> None:
        """Another chat replaces this one: its edit and answers go with it."""
        if self.editing is not None:  # the edit belonged to the chat that goes
            self.cancel_edit()
        self.state.chat = chat
        self.turn, self.answered = None, []
        self.state.emit(ChatShown(chat))
        self.state.emit(PanelChanged())

    # --- sending, and what is typed ahead -----------------------------------------

    def submit(self, text: str) -> bool:
        """Enter in the box: send now, or queue while an answer streams, the models load or the plan runs.
        False: the text stays in the box (the A/B view is open, or an edit cannot resend)."""
        s = self.state
        if s.comparing:
            s.notify("Close the A/B view first (esc); your message stays in the box.", severity="warning")
            return False
        if self.editing is not None:
            if not s.idle("resend"):
                return False
            self._cut_from(self.editing)
        if s.session is None or s.generating or s.loading or s.measuring:
            self.queued.append(text)
            s.emit(OutboxChanged(tuple(self.queued), self._queued_until()))
        else:
            self._send(s.session, text)
        return True

    def _queued_until(self) -> str:
        """What a queued message waits for, in the outbox's words."""
        s = self.state
        if s.generating:
            return "the answer ends"
        return "the measurement ends" if s.measuring else "the models are loaded"

    def _send(self, session: ChatSession, text: str) -> None:
        user = chat_types.Message(role="user", content=text)
        self.state.chat.messages.append(user)
        self.state.emit(MessageAdded(user))
        self._start_turn(session)

    def send_queued(self) -> None:
        """The chat is free: send the oldest queued message, if any."""
        s = self.state
        if self.queued and s.session is not None and not (s.generating or s.loading or s.comparing or s.measuring):
            text = self.queued.pop(0)
            s.emit(OutboxChanged(tuple(self.queued)))
            self._send(s.session, text)

    def edit_previous(self) -> None:
        """↑ in the empty box: take the last queued message back, else edit the last sent one."""
        if self.queued:
            text = self.queued.pop()
            self.state.emit(OutboxChanged(tuple(self.queued)))
            self.state.emit(ComposeText(text))
            return
        sent = [m for m in self.state.chat.messages if m.role == "user"]
        if sent:
            self.edit(sent[-1])

    def edit(self, message: chat_types.Message) -> None:
        """Put a sent message in the box; submitting resends it and replaces what followed."""
        if not self.state.idle("edit a message"):
            return
        self.editing = message
        self.state.emit(ComposeText(message.content))
        messages = self.state.chat.messages
        self.state.emit(StatusLine("editing", later=len(messages) - 1 - messages.index(message)))

    def cancel_edit(self) -> None:
        self.editing = None
        self.state.emit(ComposeText(""))
        self.state.emit(StatusLine())

    def editable(self) -> list[tuple[str, chat_types.Message, str]]:
        """The sent messages, newest first: (its first line, the message, its place in the chat)."""
        chat = self.state.chat
        n = len(chat.messages)
        return [
            (
                m.content.splitlines()[0][:80] if m.content.strip() else "(empty)",
                m,
                f"message {chat.earlier + i + 1} of {chat.earlier + n}",
            )
            for i, m in reversed(list(enumerate(chat.messages)))
            if m.role == "user"
        ]

    def _cut_from(self, message: chat_types.Message) -> None:
        """Drop `message` and everything after it."""
        chat = self.state.chat
        removed = frozenset(id(m) for m in chat.cut(chat.messages.index(message)))
        self.editing, self.turn = None, None
        self.state.emit(MessagesRemoved(removed))
        self.state.emit(StatusLine())

    def regenerate(self) -> None:
        s = self.state
        if (session := s.need_session()) is None or not s.idle("regenerate"):
            return
        messages = s.chat.messages
        if messages and messages[-1].role == "assistant":
            s.emit(MessagesRemoved(frozenset(id(m) for m in s.chat.cut(len(messages) - 1))))
        if not messages or messages[-1].role != "user":
            s.notify("Nothing to regenerate yet: send a message first.", severity="warning")
            return
        self._start_turn(session)

    # --- the answer ----------------------------------------------------------------

    def _start_turn(self, session: ChatSession) -> None:
        s = self.state
        self.turn = LiveTurn(session.spec, s.setup.per_answer())
        said = self.persistence.earlier_texts() + [(m.role, m.content) for m in s.chat.messages]
        prompt = chat_messages(said, s.setup.system)
        s.chat.messages.append(self.turn.message)
        s.emit(AnswerStarted(self.turn))
        self.persistence.start_answer(self.turn)
        s.live, self._job = self.turn, TurnJob(session, prompt, GenerationLimits(n_predict=s.setup.n_predict))
        s.emit(GENERATING)
        s.emit(Generate(self._job))

    def add_events(self, events: list[Event]) -> None:
        """A batch of the streaming answer's events, from its worker."""
        s = self.state
        turn = self.turn
        if turn is None:  # its chat was closed (deleted) while it ran: it only has to end
            if any(isinstance(e, TurnEnd) for e in events):
                self._ended()
                s.emit(StatusLine())
                self.send_queued()
            return
        if not events:
            return
        grown = []
        for event in events:
            grown.append(turn.add(event))
            if isinstance(event, TurnStart) and event.n_left_out:
                self._say_cut(event)
            if isinstance(event, TurnStart) and event.n_prompt_decoded >= READ_SAID:
                s.emit(StatusLine("generating", f"reading {plural(event.n_prompt_decoded, 'token')} of the chat first"))
            elif isinstance(event, PromptDone) and _read_long(turn):
                s.emit(GENERATING)  # read: the tokens come now
        s.emit(AnswerUpdated(Growth.joined(grown), started=isinstance(events[0], TurnStart)))
        if not turn.running:
            self._ended()
            self._finish_turn(turn)
            return
        self.persistence.save_answer()

    def _say_cut(self, start: TurnStart) -> None:
        """Once a long chat outgrows the context, and each time its cut moves on."""
        chat_id = self.state.chat.id
        if self._cut[0] == chat_id and start.n_left_out <= self._cut[1]:
            return
        self._cut = (chat_id, start.n_left_out)
        self.state.notify(
            f"This chat no longer fits the context (-c {plural(start.n_ctx, 'token')}): answers leave out its first "
            f"{plural(start.n_left_out, 'message')}. They stay saved; a larger -c keeps more.",
            title="Long chat",
        )

    def turn_failed(self, error: str) -> None:
        """The engine raised before the turn's end: keep what it said, if anything."""
        s = self.state
        s.notify(error, title="Generation failed", severity="error", timeout=10)
        turn, self.turn = self.turn, None
        self._ended()
        removed = False
        if turn is not None and not turn.message.content and turn.message in s.chat.messages:
            s.chat.cut(s.chat.messages.index(turn.message))
            removed = True
        s.emit(AnswerEnded(removed=removed))
        self.persistence.save(self.turn)
        s.emit(StatusLine())
        self.send_queued()

    def _finish_turn(self, turn: LiveTurn) -> None:
        s = self.state
        s.emit(AnswerEnded(removed=False))
        self.persistence.save(self.turn)
        end = turn.end
        if end is not None and end.error:
            s.notify(end.error, title=f"Answer ended: {end.stop_reason.value}", severity="error", timeout=10)
        if (status := s.status()) is not None:
            self.baselines.record(status.target_path, turn)
            for note in status.server.notes if status.server else ():
                if note not in self._said:
                    self._said.add(note)
                    s.notify(note, title="llama-server", severity="warning", timeout=15)
        self.answered.append(turn)
        self.persistence.record(turn)
        s.emit(PanelChanged())
        s.emit(StatusLine())
        self.send_queued()

    def _ended(self) -> None:
        """The answer's worker ended (or failed): the session is free."""
        self.state.live, self._job = None, None

    def stop(self) -> bool:
        """Ask a streaming answer to end after this round; False when none streams."""
        if (job := self._job) is not None:
            job.stop.set()
            job.session.cancel()
            return True
        return False

    def stop_or_cancel_edit(self) -> None:
        """esc: stop the answer, else leave an edit."""
        if self.stop():
            self.state.emit(STOPPING)
        elif self.editing is not None:
            self.cancel_edit()

    # --- what the screen reads of it -------------------------------------------------

    def last_answer(self) -> str | None:
        """The last answer's text (never rejected tokens); None, with a notice, when there is none."""
        answer = next((m for m in reversed(self.state.chat.messages) if m.role == "assistant"), None)
        if answer is None or not answer.content:
            self.state.notify("No answer to copy yet.", severity="warning")
            return None
        return answer.content

    def last_rounds(self) -> tuple[list[Round], str] | None:
        """The rounds of the last answer of this session, and its configuration label; None,
        with a notice, before the first."""
        turn = self.turn
        if turn is None or not turn.rounds:
            self.state.notify(
                "No rounds yet: the round details show the last answer given in this session.", severity="warning"
            )
            return None
        return turn.rounds, turn.message.config_label

    def panel_state(self) -> PanelState:
        s = self.state
        status = s.status()
        events = self.turn.events if self.turn else []
        if status is None:  # loading: what the setup asks for
            spec = s.setup.spec
            return PanelState(spec=spec, verify=spec.verify, events=events, memory=s.memory)
        return PanelState(
            spec=status.spec,
            verify=status.verify,
            events=events,
            baseline=self.baselines.get(status.target_path),
            n_ctx=status.n_ctx,
            n_past=self._context_used(),
            memory=s.memory,
            curve=s.curve,
            plannable=s.plannable,
            server=status.server,
            stored=None if self.turn else next((m for m in reversed(s.chat.messages) if m.stats), None),
        )

    def _context_used(self) -> int | None:
        """This chat's tokens in the context (not the session's cache, which a new chat or
        the A/B view leaves holding other text); None: not counted until the next answer."""
        rounds = self.turn.rounds if self.turn else []
        if rounds:
            return rounds[-1].n_past
        return None if self.state.chat.messages else 0


def _read_long(turn: LiveTurn) -> bool:
    """The turn's prompt was long enough that its reading was said."""
    start = turn.events[0] if turn.events else None
    return isinstance(start, TurnStart) and start.n_prompt_decoded >= READ_SAID
