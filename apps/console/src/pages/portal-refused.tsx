/** What a customer sees when their portal link is expired, altered or for someone else. */
export function PortalRefused({ message }: { message: string }) {
  return (
    <main className="narrow">
      <h1>This link does not work</h1>
      <div className="card error" role="alert">
        <p>{message}</p>
        <p>
          Portal links are short-lived. Go back to the page where you found this link and open it again to get
          a fresh one.
        </p>
      </div>
    </main>
  );
}
