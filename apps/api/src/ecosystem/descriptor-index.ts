import { createRegistry, type DescFile, type DescService, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";

/** The descriptors server reflection answers from: the served files and everything they import. */
export interface DescriptorIndex {
  /** Full names of the services served, sorted. */
  readonly services: readonly string[];
  fileByName(fileName: string): DescFile | undefined;
  /** The file declaring a package-qualified type, service, method, field or enum value. */
  fileContainingSymbol(symbol: string): DescFile | undefined;
  fileContainingExtension(extendee: string, fieldNumber: number): DescFile | undefined;
  /** Field numbers of every known extension of a message type; undefined for an unknown type. */
  extensionNumbersOf(extendee: string): number[] | undefined;
  /** The file, then its transitive imports (each once, breadth first), as FileDescriptorProto bytes. */
  withDependencies(file: DescFile, skip?: ReadonlySet<string>): { name: string; bytes: Uint8Array }[];
}

/**
 * Indexes the files of the given services plus any extra files (such as google/rpc/error_details.proto,
 * so a client can decode error details by reflection), with all their transitive imports.
 */
export function createDescriptorIndex(
  services: readonly DescService[],
  extraFiles: readonly DescFile[] = [],
): DescriptorIndex {
  const files = new Map<string, DescFile>();
  const visit = (file: DescFile) => {
    if (files.has(file.proto.name)) return;
    files.set(file.proto.name, file);
    for (const dependency of file.dependencies) visit(dependency);
  };
  for (const service of services) visit(service.file);
  for (const file of extraFiles) visit(file);
  const registry = createRegistry(...files.values());
  const encoded = new Map<string, Uint8Array>();
  const bytesOf = (file: DescFile) => {
    let bytes = encoded.get(file.proto.name);
    if (!bytes) {
      bytes = toBinary(FileDescriptorProtoSchema, file.proto);
      encoded.set(file.proto.name, bytes);
    }
    return bytes;
  };

  const index: DescriptorIndex = {
    services: [...new Set(services.map((service) => service.typeName))].sort(),
    fileByName: (fileName) => files.get(fileName),
    fileContainingSymbol(symbol) {
      const found = registry.get(symbol);
      if (found) return found.file;
      // Members have no registry entry of their own: look them up in their parent.
      const dot = symbol.lastIndexOf(".");
      if (dot <= 0) return undefined;
      const member = symbol.slice(dot + 1);
      const parent = registry.get(symbol.slice(0, dot));
      if (parent?.kind === "service" && parent.methods.some((method) => method.name === member)) {
        return parent.file;
      }
      if (
        parent?.kind === "message" &&
        (parent.fields.some((field) => field.name === member) ||
          parent.oneofs.some((oneof) => oneof.name === member))
      ) {
        return parent.file;
      }
      // Enum values are scoped beside their enum, as in C++.
      for (const desc of registry) {
        if (desc.kind !== "enum") continue;
        const scope = desc.typeName.slice(0, Math.max(0, desc.typeName.lastIndexOf(".")));
        if (scope === symbol.slice(0, dot) && desc.values.some((value) => value.name === member))
          return desc.file;
      }
      return undefined;
    },
    fileContainingExtension(extendee, fieldNumber) {
      const message = registry.getMessage(extendee);
      return message && registry.getExtensionFor(message, fieldNumber)?.file;
    },
    extensionNumbersOf(extendee) {
      if (!registry.getMessage(extendee)) return undefined;
      const numbers: number[] = [];
      for (const desc of registry) {
        if (desc.kind === "extension" && desc.extendee.typeName === extendee) numbers.push(desc.number);
      }
      return numbers.sort((a, b) => a - b);
    },
    withDependencies(file, skip = new Set()) {
      const out: { name: string; bytes: Uint8Array }[] = [];
      const seen = new Set<string>();
      const queue = [file];
      for (let next = queue.shift(); next; next = queue.shift()) {
        if (seen.has(next.proto.name)) continue;
        seen.add(next.proto.name);
        // The requested file always goes out; its imports only if this stream has not had them yet.
        if (next === file || !skip.has(next.proto.name))
          out.push({ name: next.proto.name, bytes: bytesOf(next) });
        queue.push(...next.dependencies);
      }
      return out;
    },
  };
  return index;
}
