/** Placeholder: filled in by the console's issue. */
export const AgentPage = ({ agentId }: { readonly agentId: string }) => <h1>Agent {agentId}</h1>
