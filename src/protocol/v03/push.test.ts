import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertA2AError } from '../arbitraries.test.js';
import { v03 } from './index.js';

describe('v0.3 push-config codec', () => {
  it('decodes set, get (with and without a config id), list and delete', () => {
    assert.deepEqual(
      v03.decodeRequest('tasks/pushNotificationConfig/set', {
        taskId: 't-1',
        pushNotificationConfig: {
          url: 'https://hooks.example/a2a',
          token: 'tok',
          authentication: { schemes: ['Bearer', 'Basic'], credentials: 'secret' },
        },
      }).params,
      {
        op: 'create',
        taskId: 't-1',
        config: {
          url: 'https://hooks.example/a2a',
          token: 'tok',
          authentication: { scheme: 'Bearer', credentials: 'secret' },
        },
      },
    );
    assert.deepEqual(v03.decodeRequest('tasks/pushNotificationConfig/get', { id: 't-1' }).params, {
      op: 'get',
      taskId: 't-1',
    });
    assert.deepEqual(
      v03.decodeRequest('tasks/pushNotificationConfig/get', { id: 't-1', pushNotificationConfigId: 'c-1' }).params,
      { op: 'get', taskId: 't-1', id: 'c-1' },
    );
    assert.deepEqual(v03.decodeRequest('tasks/pushNotificationConfig/list', { id: 't-1' }).params, {
      op: 'list',
      taskId: 't-1',
    });
    assert.deepEqual(
      v03.decodeRequest('tasks/pushNotificationConfig/delete', { id: 't-1', pushNotificationConfigId: 'c-1' }).params,
      { op: 'delete', taskId: 't-1', id: 'c-1' },
    );
  });

  it('refuses missing or malformed fields with -32602 naming the field', () => {
    assertA2AError(
      () => v03.decodeRequest('tasks/pushNotificationConfig/set', { taskId: 't' }),
      'INVALID_PARAMS',
      'pushNotificationConfig',
    );
    assertA2AError(
      () =>
        v03.decodeRequest('tasks/pushNotificationConfig/set', {
          taskId: 't',
          pushNotificationConfig: { url: 'https://h.example', authentication: { schemes: [] } },
        }),
      'INVALID_PARAMS',
      'pushNotificationConfig.authentication.schemes',
    );
    assertA2AError(
      () => v03.decodeRequest('tasks/pushNotificationConfig/delete', { id: 't' }),
      'INVALID_PARAMS',
      'pushNotificationConfigId',
    );
    assertA2AError(() => v03.decodeRequest('tasks/pushNotificationConfig/list', {}), 'INVALID_PARAMS', 'id');
  });

  it('decodes an inline message/send config', () => {
    const request = v03.decodeRequest('message/send', {
      message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'hi' }] },
      configuration: { pushNotificationConfig: { url: 'https://hooks.example/a2a' } },
    });
    assert.ok(request.method === 'send');
    assert.deepEqual(request.params.configuration.pushConfig, { url: 'https://hooks.example/a2a' });
  });

  it('encodes the nested config, a bare list and a null delete', () => {
    const config = { id: 'c-1', taskId: 't-1', url: 'https://hooks.example/a2a', authentication: { scheme: 'Bearer' } };
    const wire = {
      taskId: 't-1',
      pushNotificationConfig: { id: 'c-1', url: 'https://hooks.example/a2a', authentication: { schemes: ['Bearer'] } },
    };
    assert.deepEqual(v03.encodePushResult({ op: 'get', config }), wire);
    assert.deepEqual(v03.encodePushResult({ op: 'list', configs: [config], nextPageToken: '' }), [wire]);
    assert.equal(v03.encodePushResult({ op: 'delete' }), null);
  });
});
