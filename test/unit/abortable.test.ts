// abortable (core/client/timeouts.ts): the caller stops waiting when its signal aborts, and the work it
// gave up on is still observed, so that work's own failure later is never an unhandled rejection (which
// ends a Node process: a lost lease once took a whole instance down this way).
import { describe, expect, it } from 'vitest';
import { abortable } from '../../core/client/timeouts.ts';

describe('abortable', () => {
  it('rejects with the reason of a signal that aborts while the work runs, and resolves with the work otherwise', async () => {
    const controller = new AbortController();
    const waiting = abortable(new Promise(() => undefined), controller.signal);
    controller.abort(new Error('given up'));
    await expect(waiting).rejects.toThrow('given up');
    await expect(abortable(Promise.resolve(7), new AbortController().signal)).resolves.toBe(7);
  });

  it('observes the work given with a signal that had aborted already: its later rejection is not unhandled', async () => {
    const controller = new AbortController();
    controller.abort(new Error('the lease was lost'));
    let fail: (error: Error) => void = () => undefined;
    const work = new Promise<never>((_resolve, reject) => {
      fail = reject;
    });
    await expect(abortable(work, controller.signal)).rejects.toThrow('the lease was lost');
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      fail(new Error('the work failed too, later'));
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });
});
