import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertA2AError } from '../arbitraries.test.js';
import { v10 } from './index.js';

const config = { id: 'c-1', taskId: 't-1', url: 'https://hooks.example/a2a' };

describe('v1.0 push-config codec', () => {
  it('decodes Create with ProtoJSON names, "" as unset, and the authentication', () => {
    const request = v10.decodeRequest('CreateTaskPushNotificationConfig', {
      tenant: '',
      task_id: 't-1',
      id: '',
      url: 'https://hooks.example/a2a',
      token: 'tok',
      authentication: { scheme: 'Bearer', credentials: 'secret' },
    });
    assert.deepEqual(request, {
      method: 'push-config',
      params: {
        op: 'create',
        taskId: 't-1',
        config: {
          url: 'https://hooks.example/a2a',
          token: 'tok',
          authentication: { scheme: 'Bearer', credentials: 'secret' },
        },
      },
    });
  });

  it('decodes Get, List (pageSize 0 is unset) and Delete', () => {
    assert.deepEqual(v10.decodeRequest('GetTaskPushNotificationConfig', { taskId: 't-1', id: 'c-1' }).params, {
      op: 'get',
      taskId: 't-1',
      id: 'c-1',
    });
    assert.deepEqual(
      v10.decodeRequest('ListTaskPushNotificationConfigs', { taskId: 't-1', pageSize: 0, pageToken: '' }).params,
      { op: 'list', taskId: 't-1' },
    );
    assert.deepEqual(
      v10.decodeRequest('ListTaskPushNotificationConfigs', { taskId: 't-1', pageSize: 2, pageToken: '2' }).params,
      { op: 'list', taskId: 't-1', pageSize: 2, pageToken: '2' },
    );
    assert.deepEqual(
      v10.decodeRequest('DeleteTaskPushNotificationConfig', { taskId: 't-1', id: 'c-1', tenant: 'x' }).params,
      {
        op: 'delete',
        taskId: 't-1',
        id: 'c-1',
        tenant: 'x',
      },
    );
  });

  it('refuses missing or malformed fields with -32602 naming the field', () => {
    assertA2AError(
      () => v10.decodeRequest('CreateTaskPushNotificationConfig', { url: 'https://h.example' }),
      'INVALID_PARAMS',
      'taskId',
    );
    assertA2AError(
      () => v10.decodeRequest('CreateTaskPushNotificationConfig', { taskId: 't' }),
      'INVALID_PARAMS',
      'url',
    );
    assertA2AError(
      () =>
        v10.decodeRequest('CreateTaskPushNotificationConfig', {
          taskId: 't',
          url: 'https://h.example',
          authentication: {},
        }),
      'INVALID_PARAMS',
      'authentication.scheme',
    );
    assertA2AError(() => v10.decodeRequest('GetTaskPushNotificationConfig', { taskId: 't' }), 'INVALID_PARAMS', 'id');
    assertA2AError(
      () => v10.decodeRequest('DeleteTaskPushNotificationConfig', { taskId: 't' }),
      'INVALID_PARAMS',
      'id',
    );
    assertA2AError(
      () => v10.decodeRequest('ListTaskPushNotificationConfigs', { taskId: 't', pageSize: 101 }),
      'INVALID_PARAMS',
      'pageSize',
    );
    assertA2AError(
      () => v10.decodeRequest('CreateTaskPushNotificationConfig', { taskId: 't', url: 'x'.repeat(8193) }),
      'INVALID_PARAMS',
      'url',
    );
  });

  it('decodes an inline SendMessage config', () => {
    const request = v10.decodeRequest('SendMessage', {
      message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] },
      configuration: { taskPushNotificationConfig: { url: 'https://hooks.example/a2a', token: 't' } },
    });
    assert.equal(request.method, 'send');
    if (request.method !== 'send') return;
    assert.deepEqual(request.params.configuration.pushConfig, { url: 'https://hooks.example/a2a', token: 't' });
    assertA2AError(
      () =>
        v10.decodeRequest('SendMessage', {
          message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] },
          configuration: { taskPushNotificationConfig: { token: 't' } },
        }),
      'INVALID_PARAMS',
      'configuration.taskPushNotificationConfig.url',
    );
  });

  it('encodes the flat config, the list and an empty delete', () => {
    const full = { ...config, token: 't', authentication: { scheme: 'Bearer' } };
    assert.deepEqual(v10.encodePushResult({ op: 'create', config: full }), full);
    assert.deepEqual(v10.encodePushResult({ op: 'list', configs: [config], nextPageToken: '' }), {
      configs: [config],
      nextPageToken: '',
    });
    assert.deepEqual(v10.encodePushResult({ op: 'delete' }), {});
  });
});
