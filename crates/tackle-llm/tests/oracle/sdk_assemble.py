"""The official SDKs as the oracle for stream assembly (docs/reference/providers.md#cross-checks).

Reads a JSON array of jobs `{"protocol": "openai"|"anthropic", "base_url", "stream"}` on stdin,
sends one request per job, and prints a JSON array of what the SDK assembled, one
`{"text", "calls": [{"id", "name", "args"}], "finish"}` per job (one process for every job:
importing the SDKs takes a second).
"""
import json
import sys

import anthropic
import openai

tool = {"name": "read_file", "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}}}
messages = [{"role": "user", "content": "go"}]


def assemble(protocol, base_url, stream):
    if protocol == "openai":
        client = openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0)
        tools = [{"type": "function", "function": tool}]
        if stream:
            with client.chat.completions.stream(model="fake", messages=messages, tools=tools) as events:
                for _ in events:
                    pass
                completion = events.current_completion_snapshot
        else:
            completion = client.chat.completions.create(model="fake", messages=messages, tools=tools)
        choice = completion.choices[0]
        calls = [{"id": c.id, "name": c.function.name, "args": json.loads(c.function.arguments or "{}")}
                 for c in (choice.message.tool_calls or [])]
        result = {"text": choice.message.content or "", "calls": calls, "finish": choice.finish_reason}
    else:
        client = anthropic.Anthropic(api_key="sk-test", base_url=base_url, max_retries=0)
        tools = [{"name": tool["name"], "description": tool["description"], "input_schema": tool["parameters"]}]
        if stream:
            with client.messages.stream(model="fake", max_tokens=100, messages=messages, tools=tools) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(model="fake", max_tokens=100, messages=messages, tools=tools)
        text = "".join(b.text for b in message.content if b.type == "text")
        calls = [{"id": b.id, "name": b.name, "args": b.input} for b in message.content if b.type == "tool_use"]
        finish = {"tool_use": "tool_calls", "end_turn": "stop", "max_tokens": "length"}.get(message.stop_reason, message.stop_reason)
        result = {"text": text, "calls": calls, "finish": finish}
    return result


jobs = json.load(sys.stdin)
print(json.dumps([assemble(job["protocol"], job["base_url"], job["stream"]) for job in jobs]))
