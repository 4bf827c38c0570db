/**
 * Reading chat-completion payloads: streamed chunks, whole JSON answers, and the error shapes of
 * OpenAI, Ollama, llama.cpp and vLLM.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readCompletionAnswer, readStreamData, serverErrorMessage } from './stream.js';

describe('readStreamData', () => {
  it('reads a content delta, ignoring the empty role delta', () => {
    assert.deepEqual(readStreamData('{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}'), [
      { type: 'token', text: 'Hi' },
    ]);
    assert.deepEqual(readStreamData('{"choices":[{"delta":{"role":"assistant","content":""}}]}'), []);
  });

  it('reads a finish reason, alone or with the last content', () => {
    assert.deepEqual(readStreamData('{"choices":[{"delta":{},"finish_reason":"length"}]}'), [
      { type: 'finish', reason: 'length' },
    ]);
    assert.deepEqual(readStreamData('{"choices":[{"delta":{"content":"."},"finish_reason":"stop"}]}'), [
      { type: 'token', text: '.' },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('reads [DONE], with or without surrounding spaces', () => {
    assert.deepEqual(readStreamData('[DONE]'), [{ type: 'done' }]);
    assert.deepEqual(readStreamData(' [DONE] '), [{ type: 'done' }]);
  });

  it('marks reasoning deltas as activity and never as text', () => {
    assert.deepEqual(readStreamData('{"choices":[{"delta":{"reasoning_content":"hmm"}}]}'), [{ type: 'reasoning' }]);
    assert.deepEqual(readStreamData('{"choices":[{"delta":{"reasoning":"hmm"}}]}'), [{ type: 'reasoning' }]);
  });

  it('ignores usage-only chunks, tool-call deltas and unknown objects', () => {
    assert.deepEqual(readStreamData('{"choices":[],"usage":{"total_tokens":3}}'), []);
    assert.deepEqual(readStreamData('{"choices":[{"delta":{"tool_calls":[{"index":0}]}}]}'), []);
    assert.deepEqual(readStreamData('{"object":"chat.completion.chunk"}'), []);
  });

  it('reads tool-call deltas: index, id and name once, arguments in pieces, parallel calls by index', () => {
    const first = readStreamData(
      '{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"fs_read","arguments":""}},' +
        '{"index":1,"id":"call_b","type":"function","function":{"name":"fs_list"}}]}}]}',
    );
    assert.deepEqual(first, [
      { type: 'tool-call', index: 0, id: 'call_a', name: 'fs_read' },
      { type: 'tool-call', index: 1, id: 'call_b', name: 'fs_list' },
    ]);
    assert.deepEqual(
      readStreamData('{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\\"p"}}]}}]}'),
      [{ type: 'tool-call', index: 1, arguments: '{"p' }],
    );
    assert.deepEqual(readStreamData('{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}'), [
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('reads arguments sent as an object as their JSON text, and an odd index as the position', () => {
    assert.deepEqual(
      readStreamData(
        '{"choices":[{"delta":{"tool_calls":[{"index":-3,"function":{"name":"f","arguments":{"a":1}}}]}}]}',
      ),
      [{ type: 'tool-call', index: 0, name: 'f', arguments: '{"a":1}' }],
    );
  });

  it('reads an error object', () => {
    assert.deepEqual(readStreamData('{"error":{"message":"rate limited","type":"x"}}'), [
      { type: 'error', message: 'rate limited' },
    ]);
  });

  it('calls anything that is not a JSON object invalid', () => {
    for (const data of ['{"choices":[', 'hello', '[1,2]', 'null', '42']) {
      assert.deepEqual(readStreamData(data), [{ type: 'invalid', what: 'a stream event that is not a JSON object' }]);
    }
  });
});

describe('readCompletionAnswer', () => {
  it('reads the message content of a whole answer', () => {
    const body = JSON.stringify({
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Whole answer' }, finish_reason: 'stop' }],
    });
    assert.deepEqual(readCompletionAnswer(body), [
      { type: 'token', text: 'Whole answer' },
      { type: 'finish', reason: 'stop' },
      { type: 'done' },
    ]);
  });

  it('reads the tool calls of a whole answer', () => {
    const body = JSON.stringify({
      choices: [
        {
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'fs_read', arguments: '{"path":"a"}' } },
              { id: 'c2', type: 'function', function: { name: 'fs_list', arguments: '{}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
    });
    assert.deepEqual(readCompletionAnswer(body), [
      { type: 'tool-call', index: 0, id: 'c1', name: 'fs_read', arguments: '{"path":"a"}' },
      { type: 'tool-call', index: 1, id: 'c2', name: 'fs_list', arguments: '{}' },
      { type: 'finish', reason: 'tool_calls' },
      { type: 'done' },
    ]);
  });

  it('finishes with no token when the content is empty or null', () => {
    assert.deepEqual(readCompletionAnswer('{"choices":[{"message":{"content":null}}]}'), [
      { type: 'finish', reason: 'stop' },
      { type: 'done' },
    ]);
  });

  it('reports an error body, a body without choices and one that is not JSON', () => {
    assert.deepEqual(readCompletionAnswer('{"error":"model not found"}'), [
      { type: 'error', message: 'model not found' },
    ]);
    assert.deepEqual(readCompletionAnswer('{"id":"x"}'), [{ type: 'invalid', what: 'an answer without choices' }]);
    assert.deepEqual(readCompletionAnswer('<html>'), [
      { type: 'invalid', what: 'an answer that is not a JSON object' },
    ]);
  });
});

describe('serverErrorMessage', () => {
  it('reads the OpenAI, Ollama and vLLM shapes', () => {
    assert.deepEqual(serverErrorMessage({ error: { message: 'bad key', type: 'invalid_request_error' } }), {
      message: 'bad key',
    });
    assert.deepEqual(serverErrorMessage({ error: 'model "x" not found' }), { message: 'model "x" not found' });
    assert.deepEqual(serverErrorMessage({ object: 'error', message: 'too long', code: 400 }), { message: 'too long' });
  });

  it('knows an error without a message, and a non-error', () => {
    assert.deepEqual(serverErrorMessage({ error: { code: 500 } }), { message: undefined });
    assert.deepEqual(serverErrorMessage({ error: 42 }), { message: undefined });
    assert.equal(serverErrorMessage({ error: null, choices: [] }), undefined);
    assert.equal(serverErrorMessage('error'), undefined);
  });
});
