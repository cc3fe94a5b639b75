"""A fake editor driving `miniagent acp` with the official ACP Python SDK (tests/acp.rs).

It reads its setup as JSON from argv[1], plays the scenario the Rust test scripted the
model server for, checks every message it receives against the SDK's pydantic schema
models, and prints one JSON summary on stdout for the Rust test to compare whole.
"""

import asyncio
import json
import sys
import time

import acp
from acp import schema
from acp.connection import StreamDirection
from acp.stdio import spawn_agent_process

SETUP = json.loads(sys.argv[1])
TIMEOUT = 30

# The result model of each method the client calls, to validate responses with.
RESPONSES = {
    "initialize": schema.InitializeResponse,
    "session/new": schema.NewSessionResponse,
    "session/load": schema.LoadSessionResponse,
    "session/list": schema.ListSessionsResponse,
    "session/prompt": schema.PromptResponse,
    "session/set_mode": schema.SetSessionModeResponse,
    "session/set_config_option": schema.SetSessionConfigOptionResponse,
    "session/close": schema.CloseSessionResponse,
}
REQUESTS = {
    "session/request_permission": schema.RequestPermissionRequest,
    "fs/read_text_file": schema.ReadTextFileRequest,
    "fs/write_text_file": schema.WriteTextFileRequest,
}
NOTIFICATIONS = {
    "session/update": schema.SessionNotification,
    # A permission request the agent withdraws when the prompt is cancelled.
    "$/cancel_request": schema.CancelRequestNotification,
}


class Checker:
    """Validates each incoming message against the schema; remembers what was wrong."""

    def __init__(self):
        self.sent = {}
        self.problems = []
        self.received = 0

    def __call__(self, event):
        message = event.message
        if event.direction == StreamDirection.OUTGOING:
            if "method" in message and "id" in message:
                self.sent[message["id"]] = message["method"]
            return
        self.received += 1
        try:
            if "method" in message:
                table = REQUESTS if "id" in message else NOTIFICATIONS
                model = table.get(message["method"])
                if model is None:
                    self.problems.append(f"unexpected method {message['method']}")
                else:
                    model.model_validate(message.get("params"))
            elif "error" in message:
                error = message["error"]
                if not isinstance(error.get("code"), int) or not isinstance(error.get("message"), str):
                    self.problems.append(f"malformed error {message}")
            else:
                method = self.sent.get(message.get("id"))
                model = RESPONSES.get(method)
                if model is None:
                    self.problems.append(f"a response to an unknown request {message}")
                elif message.get("result") is not None:
                    model.model_validate(message["result"])
        except Exception as err:  # pydantic's ValidationError, and anything odd
            self.problems.append(f"{message.get('method', 'response')}: {err}")


def dump(model):
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


class Editor(acp.Client):
    """Records the session's updates and answers permission requests from a queue."""

    def __init__(self):
        self.updates = []
        self.answers = []
        self.permissions = []
        self.in_progress = asyncio.Event()
        self.asked = asyncio.Event()
        self.release = asyncio.Event()

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.permissions.append(
            {"toolCall": dump(tool_call), "options": [option.option_id for option in options]}
        )
        answer = self.answers.pop(0)
        self.asked.set()
        if answer == "hold":
            # Answered only after the prompt is cancelled, as the protocol asks.
            await self.release.wait()
            answer = "cancelled"
        if answer == "cancelled":
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def session_update(self, session_id, update, **kwargs):
        data = dump(update)
        self.updates.append(data)
        if data.get("sessionUpdate") == "tool_call_update" and data.get("status") == "in_progress":
            self.in_progress.set()

    async def write_text_file(self, *args, **kwargs):
        raise acp.RequestError.method_not_found("fs/write_text_file")

    async def read_text_file(self, *args, **kwargs):
        raise acp.RequestError.method_not_found("fs/read_text_file")

    def take(self):
        """The updates since the last call, chunks of a kind joined, progress left out."""
        shown = []
        for update in self.updates:
            kind = update["sessionUpdate"]
            if kind in ("usage_update", "available_commands_update"):
                continue
            if kind.endswith("_chunk"):
                text = update["content"]["text"]
                if shown and isinstance(shown[-1], list) and shown[-1][0] == kind:
                    shown[-1][1] += text
                else:
                    shown.append([kind, text])
            elif kind == "tool_call_update" and "status" not in update:
                continue  # running output: how it is split depends on timing
            else:
                shown.append(update)
        self.updates = []
        return shown


async def prompt(conn, editor, session_id, text, answers=()):
    editor.answers = list(answers)
    editor.permissions = []
    response = await asyncio.wait_for(
        conn.prompt(session_id=session_id, prompt=[acp.text_block(text)]), TIMEOUT
    )
    return {
        "stop": response.stop_reason,
        "updates": editor.take(),
        "permissions": editor.permissions,
    }


async def first_connection(summary, checker):
    editor = Editor()
    async with spawn_agent_process(
        editor, SETUP["program"], *SETUP["args"], env=SETUP["env"], cwd=SETUP["workspace"],
        observers=[checker],
    ) as (conn, _process):
        init = await asyncio.wait_for(
            conn.initialize(protocol_version=acp.PROTOCOL_VERSION), TIMEOUT
        )
        summary["initialize"] = dump(init)
        session = await asyncio.wait_for(
            conn.new_session(cwd=SETUP["workspace"], mcp_servers=[]), TIMEOUT
        )
        summary["session"] = {
            "modes": dump(session.modes),
            "configOptions": [option.id for option in session.config_options],
        }
        sid = session.session_id
        summary["session_id"] = sid
        # The commands come right after the session.
        await asyncio.sleep(0.2)
        summary["commands"] = [
            [command["name"] for command in update["availableCommands"]]
            for update in editor.updates
            if update["sessionUpdate"] == "available_commands_update"
        ]
        summary["usage_seen"] = False
        editor.updates = []
        summary["hello"] = await prompt(conn, editor, sid, "hello")
        summary["bash"] = await prompt(conn, editor, sid, "say hi", ["allow_once"])
        summary["edit"] = await prompt(conn, editor, sid, "edit the notes", ["allow_once"])
        summary["denied"] = await prompt(conn, editor, sid, "remove the notes", ["reject_once"])

        # Cancel once the long command runs; the prompt must answer `cancelled`.
        editor.answers = ["allow_always"]
        editor.permissions = []
        editor.in_progress.clear()
        running = asyncio.ensure_future(
            conn.prompt(session_id=sid, prompt=[acp.text_block("wait a while")])
        )
        await asyncio.wait_for(editor.in_progress.wait(), TIMEOUT)
        # A second prompt while one runs is refused; the first goes on.
        try:
            await asyncio.wait_for(
                conn.prompt(session_id=sid, prompt=[acp.text_block("meanwhile")]), TIMEOUT
            )
            summary["while_running"] = "accepted"
        except acp.RequestError as err:
            summary["while_running"] = [err.code, str(err)]
        cancelled_at = time.monotonic()
        await conn.cancel(session_id=sid)
        response = await asyncio.wait_for(running, TIMEOUT)
        summary["cancel"] = {
            "stop": response.stop_reason,
            "within_5s": time.monotonic() - cancelled_at < 5,
            "ms": round((time.monotonic() - cancelled_at) * 1000),
            "updates": editor.take(),
            "permissions": editor.permissions,
        }
        # Cancel while the permission request waits: the editor answers it `cancelled`.
        editor.answers = ["hold"]
        editor.permissions = []
        editor.asked.clear()
        waiting = asyncio.ensure_future(
            conn.prompt(session_id=sid, prompt=[acp.text_block("touch a file")])
        )
        await asyncio.wait_for(editor.asked.wait(), TIMEOUT)
        await conn.cancel(session_id=sid)
        editor.release.set()
        response = await asyncio.wait_for(waiting, TIMEOUT)
        summary["cancel_asking"] = {
            "stop": response.stop_reason,
            "updates": editor.take(),
            "permissions": editor.permissions,
        }
        summary["after_cancel"] = await prompt(conn, editor, sid, "are you there?")

        summary["mode"] = dump(
            await asyncio.wait_for(conn.set_session_mode(session_id=sid, mode_id="auto-edit"), TIMEOUT)
        )
        await asyncio.sleep(0.2)
        summary["mode_updates"] = editor.take()


async def second_connection(summary, checker):
    editor = Editor()
    async with spawn_agent_process(
        editor, SETUP["program"], *SETUP["args"], env=SETUP["env"], cwd=SETUP["workspace"],
        observers=[checker],
    ) as (conn, _process):
        await asyncio.wait_for(conn.initialize(protocol_version=acp.PROTOCOL_VERSION), TIMEOUT)
        listed = await asyncio.wait_for(conn.list_sessions(cwd=SETUP["workspace"]), TIMEOUT)
        summary["listed"] = [[info.session_id, info.title] for info in listed.sessions]
        sid = summary["session_id"]
        # Another workspace's cwd is refused.
        try:
            await asyncio.wait_for(conn.load_session(cwd="/", session_id=sid), TIMEOUT)
            summary["load_elsewhere"] = "accepted"
        except acp.RequestError as err:
            summary["load_elsewhere"] = err.code
        loaded = await asyncio.wait_for(
            conn.load_session(cwd=SETUP["workspace"], session_id=sid), TIMEOUT
        )
        # Everything replayed arrived before the answer.
        summary["replayed"] = editor.take()
        summary["loaded_mode"] = loaded.modes.current_mode_id
        summary["continued"] = await prompt(conn, editor, sid, "go on")
        summary["compact"] = await prompt(conn, editor, sid, "/compact")
        summary["clear"] = await prompt(conn, editor, sid, "/clear")
        summary["fresh"] = await prompt(conn, editor, sid, "fresh start")
        summary["closed"] = dump(await asyncio.wait_for(conn.close_session(session_id=sid), TIMEOUT))
        try:
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("gone?")]), TIMEOUT)
            summary["after_close"] = "accepted"
        except acp.RequestError as err:
            summary["after_close"] = err.code


class FilesEditor(Editor):
    """An editor with unsaved buffers that offers them through fs/*."""

    def __init__(self, buffers):
        super().__init__()
        self.buffers = dict(buffers)
        self.reads = []
        self.writes = {}

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        self.reads.append(path)
        if path not in self.buffers:
            raise acp.RequestError.resource_not_found(path)
        return schema.ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id, path, content, **kwargs):
        self.writes[path] = content
        self.buffers[path] = content
        return schema.WriteTextFileResponse()


async def files_connection(summary, checker):
    editor = FilesEditor(SETUP["buffers"])
    async with spawn_agent_process(
        editor, SETUP["program"], *SETUP["args"], env=SETUP["env"], cwd=SETUP["workspace"],
        observers=[checker],
    ) as (conn, _process):
        capabilities = schema.ClientCapabilities(
            fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True)
        )
        await asyncio.wait_for(
            conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=capabilities),
            TIMEOUT,
        )
        session = await asyncio.wait_for(conn.new_session(cwd=SETUP["workspace"], mcp_servers=[]), TIMEOUT)
        result = await prompt(conn, editor, session.session_id, "fix the buffer", ["allow_once"])
        summary["stop"] = result["stop"]
        summary["permissions"] = result["permissions"]
        summary["reads"] = editor.reads
        summary["writes"] = editor.writes


async def load_connection(summary, checker):
    """Loads a session recorded outside the editor (by exec) and goes on with it."""
    editor = Editor()
    async with spawn_agent_process(
        editor, SETUP["program"], *SETUP["args"], env=SETUP["env"], cwd=SETUP["workspace"],
        observers=[checker],
    ) as (conn, _process):
        await asyncio.wait_for(conn.initialize(protocol_version=acp.PROTOCOL_VERSION), TIMEOUT)
        await asyncio.wait_for(
            conn.load_session(cwd=SETUP["workspace"], session_id=SETUP["session_id"]), TIMEOUT
        )
        summary["replayed"] = editor.take()
        summary["continued"] = await prompt(conn, editor, SETUP["session_id"], "and now?")


async def model_connection(summary, checker):
    """Switches the session's model through its `model` config option, then prompts."""
    editor = Editor()
    async with spawn_agent_process(
        editor, SETUP["program"], *SETUP["args"], env=SETUP["env"], cwd=SETUP["workspace"],
        observers=[checker],
    ) as (conn, _process):
        await asyncio.wait_for(conn.initialize(protocol_version=acp.PROTOCOL_VERSION), TIMEOUT)
        session = await asyncio.wait_for(conn.new_session(cwd=SETUP["workspace"], mcp_servers=[]), TIMEOUT)
        sid = session.session_id
        summary["offered"] = [dump(option) for option in session.config_options][1]
        summary["first"] = await prompt(conn, editor, sid, "hello")
        try:
            await asyncio.wait_for(conn.set_config_option(config_id="model", session_id=sid, value="broken"), TIMEOUT)
            summary["broken"] = "accepted"
        except acp.RequestError as err:
            summary["broken"] = [err.code, str(err)]
        switched = await asyncio.wait_for(
            conn.set_config_option(config_id="model", session_id=sid, value="other"), TIMEOUT
        )
        summary["switched"] = [dump(option) for option in switched.config_options][1]["currentValue"]
        summary["second"] = await prompt(conn, editor, sid, "again")


async def main():
    summary = {}
    checker = Checker()
    if SETUP.get("scenario") == "model":
        await model_connection(summary, checker)
        summary["schema_problems"] = checker.problems
        print(json.dumps(summary))
        return
    if SETUP.get("scenario") == "load":
        await load_connection(summary, checker)
        summary["schema_problems"] = checker.problems
        print(json.dumps(summary))
        return
    if SETUP.get("scenario") == "files":
        await files_connection(summary, checker)
        summary["schema_problems"] = checker.problems
        print(json.dumps(summary))
        return
    await first_connection(summary, checker)
    await second_connection(summary, checker)
    summary["schema_problems"] = checker.problems
    summary["validated"] = checker.received > 0
    print(json.dumps(summary))


asyncio.run(main())
