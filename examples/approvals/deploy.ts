/**
 * An agent that acts: it proposes to deploy the service the caller names, and deploys only with
 * the gateway's go-ahead (`turn.approvedAction`), which comes once the person who answers for the
 * caller approved the action in the console, over /approvals, or with `airlock approvals`.
 * See docs/APPROVALS.md.
 *
 * @example
 * ```yaml
 * backend: { type: module, module: examples/approvals/deploy.ts }
 * ```
 */
import type { AgentBackend, AgentEvent, AgentTurn } from '../../src/index.js';

const deployer: AgentBackend = {
  kind: 'example-deployer',
  async *run(turn: AgentTurn): AsyncIterable<AgentEvent> {
    const action = turn.approvedAction;
    if (action !== undefined) {
      // The one action approved, with the arguments as proposed. A real agent would act here.
      const args = action.args as { service?: unknown } | null;
      const service = typeof args?.service === 'string' ? args.service : 'the service';
      yield { type: 'completed', text: `Deployed ${service} (approved by ${action.approvedBy ?? 'the ladder'}).` };
      return;
    }
    const text = turn.message.parts
      .map((part) => (part.kind === 'text' ? part.text : ''))
      .join(' ')
      .trim();
    const service = text.length > 0 ? text.slice(0, 64) : 'web';
    yield { type: 'working', text: `Preparing a deployment of ${service}.` };
    yield {
      type: 'propose-action',
      action: { tool: 'deploy', args: { service, environment: 'production' }, level: 'L4' },
    };
  },
};

export default deployer;
