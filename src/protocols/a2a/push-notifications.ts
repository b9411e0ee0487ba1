import type { PushNotificationSender, PushNotificationStore } from '@a2a-js/sdk/server';

/** Push notifications (webhooks): off unless configured, since every webhook URL is a request the server makes for a client. */
export interface A2aPushOptions {
  /**
   * Which webhook URLs clients may register (required): the server POSTs the task's updates to them,
   * so refuse addresses inside your network. A refused URL answers the client's request with an error
   * naming it.
   */
  allowUrl: (url: URL) => boolean;
  /** Where the webhook configs are kept (default: the SDK's InMemoryPushNotificationStore). */
  store?: PushNotificationStore;
}

type ServerModule = typeof import('@a2a-js/sdk/server');
type ErrorsModule = typeof import('@a2a-js/sdk/errors');

/** The SDK's store and sender for push notifications, the store checking each URL against `allowUrl` before it is kept. */
export function pushNotificationsOf(options: A2aPushOptions, sdk: ServerModule, errors: ErrorsModule): { store: PushNotificationStore; sender: PushNotificationSender } {
  if (typeof (options as Partial<A2aPushOptions> | undefined)?.allowUrl !== 'function') {
    throw new TypeError('a2aServer: options.pushNotifications.allowUrl is required: (url: URL) => boolean, which webhook URLs clients may register');
  }
  const inner = options.store ?? new sdk.InMemoryPushNotificationStore();
  const store: PushNotificationStore = {
    save: async (taskId, context, config) => {
      let url: URL;
      try {
        url = new URL(config.url);
      } catch {
        throw new errors.RequestMalformedError(`the push notification URL ${JSON.stringify(config.url)} is not a URL`);
      }
      if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new errors.RequestMalformedError(`the push notification URL ${url.href} is not http(s)`);
      let allowed = false;
      try {
        allowed = options.allowUrl(url) === true;
      } catch {
        allowed = false;
      }
      if (!allowed) throw new errors.RequestMalformedError(`the push notification URL ${url.href} is not allowed on this server`);
      return inner.save(taskId, context, config);
    },
    load: (taskId, context) => inner.load(taskId, context),
    delete: (taskId, context, configId) => inner.delete(taskId, context, configId),
    ...(inner.loadWithMetadata ? { loadWithMetadata: (taskId: string, context: Parameters<PushNotificationStore['load']>[1]) => inner.loadWithMetadata!(taskId, context) } : {}),
  };
  return { store, sender: new sdk.DefaultPushNotificationSender(store) };
}
