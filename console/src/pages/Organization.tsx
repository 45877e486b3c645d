/** Placeholder: filled in by the console's issue. */
export const OrganizationPage = () => <h1>Organization</h1>
