/** Placeholder: filled in by the console's issue. */
export const WebhooksPage = () => <h1>Webhooks</h1>
