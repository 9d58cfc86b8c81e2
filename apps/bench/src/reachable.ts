import net from "node:net";

/** Where the servers backend expects PostgreSQL and Redis (the same variables as the test kit). */
export function serverAddresses(env: NodeJS.ProcessEnv = process.env) {
  const pgUrl = new URL(env.HOOKLINE_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
  return {
    postgres: { host: pgUrl.hostname, port: Number(pgUrl.port || 5432), url: pgUrl.toString() },
    redis: {
      host: env.HOOKLINE_TEST_REDIS_HOST ?? "127.0.0.1",
      port: Number(env.HOOKLINE_TEST_REDIS_PORT ?? 6379),
    },
  };
}

/** Undefined when PostgreSQL and Redis both accept connections; otherwise what is wrong. */
export async function serversProblem(): Promise<string | undefined> {
  const { postgres, redis } = serverAddresses();
  const problems: string[] = [];
  const pg = await tcpProblem(postgres.host, postgres.port);
  if (pg) problems.push(`PostgreSQL at ${postgres.host}:${postgres.port} (${postgres.url}): ${pg}`);
  const rd = await redisProblem(redis.host, redis.port);
  if (rd) problems.push(`Redis at ${redis.host}:${redis.port}: ${rd}`);
  return problems.length > 0 ? problems.join("; ") : undefined;
}

function tcpProblem(host: string, port: number): Promise<string | undefined> {
  return probe(host, port, undefined);
}

function redisProblem(host: string, port: number): Promise<string | undefined> {
  return probe(host, port, { send: "PING\r\n", expect: "+PONG" });
}

function probe(
  host: string,
  port: number,
  exchange: { send: string; expect: string } | undefined,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (problem: string | undefined) => {
      socket.destroy();
      resolve(problem);
    };
    socket.setTimeout(2_000, () => done("no answer within 2 s"));
    socket.once("error", (error: NodeJS.ErrnoException) =>
      done(`connection failed: ${error.code ?? error.message}`),
    );
    socket.once("connect", () => {
      if (!exchange) return done(undefined);
      socket.write(exchange.send);
      socket.once("data", (data: Buffer) => {
        const text = data.toString().trim();
        done(text.startsWith(exchange.expect) ? undefined : `answered "${text.slice(0, 80)}" to PING`);
      });
    });
  });
}
