/** Placeholder: filled in by the console's issue. */
export const FleetPage = () => <h1>Fleet</h1>
