/**
 * The standard gRPC server reflection (`grpc.reflection.v1.ServerReflection`), so grpcurl and
 * the like list and call this port's services without the .proto files (docs/grpc.md#health-and-reflection).
 */
import { Code, type ServiceImpl } from '@connectrpc/connect';
import { createRegistry, toBinary, type DescFile, type MessageInitShape } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import {
  ServerReflection,
  type ServerReflectionRequest,
  type ServerReflectionResponseSchema,
} from './gen-proto/grpc/reflection/v1/reflection_pb.js';

/** The reflection handlers over `files` (their imports are included). */
export function reflectionHandlers(files: readonly DescFile[]): ServiceImpl<typeof ServerReflection> {
  const all = new Map<string, DescFile>();
  const add = (f: DescFile): void => {
    if (all.has(f.name + '.proto')) return;
    all.set(f.name + '.proto', f);
    f.dependencies.forEach(add);
  };
  files.forEach(add);
  const registry = createRegistry(...all.values());
  const services = files.flatMap((f) => f.services.map((s) => ({ name: s.typeName })));
  const bytes = new Map<string, Uint8Array>();
  for (const [name, f] of all) bytes.set(name, toBinary(FileDescriptorProtoSchema, f.proto));
  /** The file and its imports, imports last (each once). */
  const closure = (f: DescFile): Uint8Array[] => {
    const seen = new Set<string>();
    const out: Uint8Array[] = [];
    const walk = (g: DescFile): void => {
      const n = g.name + '.proto';
      if (seen.has(n)) return;
      seen.add(n);
      out.push(bytes.get(n)!);
      g.dependencies.forEach(walk);
    };
    walk(f);
    return out;
  };
  const fileOfSymbol = (symbol: string): DescFile | undefined => {
    const d = registry.get(symbol);
    if (d) return d.file;
    const dot = symbol.lastIndexOf('.');
    if (dot < 0) return undefined;
    const parent = registry.get(symbol.slice(0, dot));
    if (parent?.kind === 'service' && parent.methods.some((m) => m.name === symbol.slice(dot + 1))) return parent.file;
    if (parent?.kind === 'message' && parent.fields.some((m) => m.name === symbol.slice(dot + 1))) return parent.file;
    return undefined;
  };
  const answer = (req: ServerReflectionRequest): MessageInitShape<typeof ServerReflectionResponseSchema> => {
    const base = { validHost: req.host, originalRequest: req };
    const r = req.messageRequest;
    const notFound = (what: string) => ({
      ...base,
      messageResponse: {
        case: 'errorResponse' as const,
        value: { errorCode: Code.NotFound, errorMessage: `${what} is not served here` },
      },
    });
    const file = (f: DescFile | undefined, what: string) =>
      f
        ? {
            ...base,
            messageResponse: {
              case: 'fileDescriptorResponse' as const,
              value: { fileDescriptorProto: closure(f) },
            },
          }
        : notFound(what);
    switch (r.case) {
      case 'listServices':
        return { ...base, messageResponse: { case: 'listServicesResponse', value: { service: services } } };
      case 'fileByFilename':
        return file(all.get(r.value), `the file ${JSON.stringify(r.value.slice(0, 200))}`);
      case 'fileContainingSymbol':
        return file(fileOfSymbol(r.value), `the symbol ${JSON.stringify(r.value.slice(0, 200))}`);
      case 'fileContainingExtension':
        return notFound('the extension');
      case 'allExtensionNumbersOfType':
        return registry.getMessage(r.value)
          ? {
              ...base,
              messageResponse: {
                case: 'allExtensionNumbersResponse',
                value: { baseTypeName: r.value, extensionNumber: [] },
              },
            }
          : notFound(`the type ${JSON.stringify(r.value.slice(0, 200))}`);
      default:
        return {
          ...base,
          messageResponse: {
            case: 'errorResponse',
            value: { errorCode: Code.InvalidArgument, errorMessage: 'the request names no question' },
          },
        };
    }
  };
  return {
    async *serverReflectionInfo(requests) {
      for await (const req of requests) yield answer(req);
    },
  };
}
