import { useEffect, useState } from "react";

/** The page named by the URL's hash: "#/endpoints", "#/delivery/<id>", ... */
export interface Route {
  page: string;
  arg: string;
}

function parse(): Route {
  const [page = "activity", ...rest] = window.location.hash.replace(/^#\/?/, "").split("/");
  try {
    return { page: page || "activity", arg: decodeURIComponent(rest.join("/")) };
  } catch {
    // A broken % escape (a mangled address) names nothing: show the default page, not a blank one.
    return { page: "activity", arg: "" };
  }
}

export function useRoute(): Route {
  const [route, setRoute] = useState(parse);
  useEffect(() => {
    const update = () => setRoute(parse());
    window.addEventListener("hashchange", update);
    return () => window.removeEventListener("hashchange", update);
  }, []);
  return route;
}

export function href(page: string, arg?: string): string {
  return arg ? `#/${page}/${encodeURIComponent(arg)}` : `#/${page}`;
}
