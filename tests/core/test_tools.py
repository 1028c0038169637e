import re

import pytest
from pydantic import BaseModel

from envgym.tools import (Tool, ToolCallError, extract_tag, parse_json_calls, parse_tag_calls,
                          render_tools)


class Query(BaseModel):
    query: str


class Seg(BaseModel):
    start: int
    end: int


SEARCH = Tool("search", "Search the corpus.", Query)
SEG = Tool("seg", "A segment.", Seg)


def test_tag_call_fills_the_single_argument_and_spans_it():
    text = "<think>hm</think><search> capital of Vorland </search>"
    [call] = parse_tag_calls(text, [SEARCH])
    assert call.arguments.query == "capital of Vorland"
    assert text[call.arg_start:call.arg_end].strip() == "capital of Vorland"
    assert text[call.start:call.end].startswith("<search>")


def test_json_call_validates_arguments_strictly():
    [call] = parse_json_calls('<tool_call>{"name": "seg", "arguments": {"start": 1, "end": 5}}</tool_call>', [SEG])
    assert (call.arguments.start, call.arguments.end) == (1, 5)
    with pytest.raises(ToolCallError, match=re.escape("`start`: Input should be a valid integer")):
        parse_json_calls('<tool_call>{"name": "seg", "arguments": {"start": "1", "end": 5}}</tool_call>', [SEG])


def test_json_arguments_may_be_a_json_string_like_openai():
    [call] = parse_json_calls('<tool_call>{"name": "search", "arguments": "{\\"query\\": \\"x\\"}"}</tool_call>', [SEARCH])
    assert call.arguments.query == "x"


@pytest.mark.parametrize("text, message", [
    ("<tool_call>{oops}</tool_call>", "tool_call 1: invalid JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
    ('<tool_call>{"name": "rm"}</tool_call>', "tool_call 1: unknown tool 'rm'; available tools: `search`."),
    ('<tool_call>{"arguments": {}}</tool_call>', "tool_call 1: missing string field `name`."),
    ("<tool_call>[1]</tool_call>", "tool_call 1: expected a JSON object"),
    ('<tool_call>{"name": "search", "arguments": 3}</tool_call>', "`arguments` must be a JSON object"),
    ("<tool_call>{", "`<tool_call>` at character 0 is never closed"),
    ("</tool_call>", "has no opening `<tool_call>`"),
    ("<tool_call><tool_call></tool_call>", "tags are nested"),
])
def test_malformed_json_calls_get_precise_messages(text, message):
    with pytest.raises(ToolCallError, match=re.escape(message)):
        parse_json_calls(text, [SEARCH])


def test_extract_tag_requires_uniqueness():
    assert extract_tag("<answer>B</answer>", "answer") == "B"
    assert extract_tag("no tags", "answer") is None
    with pytest.raises(ToolCallError, match="appears 2 times"):
        extract_tag("<answer>A</answer><answer>B</answer>", "answer")
    with pytest.raises(ToolCallError, match="missing"):
        extract_tag("nothing", "answer", required=True)


def test_schema_is_openai_style_and_rendered_in_prompts():
    schema = SEARCH.schema()
    assert schema["type"] == "function"
    assert schema["function"]["parameters"]["properties"]["query"]["type"] == "string"
    assert '"name": "search"' in render_tools([SEARCH], "json")
    assert "<search>query</search>" in render_tools([SEARCH], "tag")
