// gRPC server reflection, so grpcurl and the like need no .proto files (docs/grpc.md#health-and-reflection).
import { Code, type ServiceImpl } from '@connectrpc/connect';
import { createRegistry, toBinary, type DescFile, type MessageInitShape } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import {
  ServerReflection,
  type ServerReflectionRequest,
  type ServerReflectionResponseSchema,
} from './gen-proto/grpc/reflection/v1/reflection_pb.js';

/** `f` and its imports, each once, imports after the files that import them, by file name. */
function withImports(f: DescFile, into = new Map<string, DescFile>()): Map<string, DescFile> {
  if (into.has(f.name + '.proto')) return into;
  into.set(f.name + '.proto', f);
  for (const d of f.dependencies) withImports(d, into);
  return into;
}

export function reflectionHandlers(files: readonly DescFile[]): ServiceImpl<typeof ServerReflection> {
  const all = new Map<string, DescFile>();
  for (const f of files) withImports(f, all);
  const registry = createRegistry(...all.values());
  const services = files.flatMap((f) => f.services.map((s) => ({ name: s.typeName })));
  const bytes = new Map([...all].map(([name, f]) => [name, toBinary(FileDescriptorProtoSchema, f.proto)]));
  const fileOfSymbol = (symbol: string): DescFile | undefined => {
    const d = registry.get(symbol);
    if (d) return d.file;
    const dot = symbol.lastIndexOf('.');
    if (dot < 0) return undefined;
    const parent = registry.get(symbol.slice(0, dot));
    const members = parent?.kind === 'service' ? parent.methods : parent?.kind === 'message' ? parent.fields : [];
    return members.some((m) => m.name === symbol.slice(dot + 1)) ? parent?.file : undefined;
  };
  const respond = (r: ServerReflectionRequest['messageRequest']): Response => {
    const file = (f: DescFile | undefined, what: string): Response =>
      f
        ? {
            case: 'fileDescriptorResponse',
            value: { fileDescriptorProto: [...withImports(f).keys()].map((n) => bytes.get(n)!) },
          }
        : notFound(what);
    switch (r.case) {
      case 'listServices':
        return { case: 'listServicesResponse', value: { service: services } };
      case 'fileByFilename':
        return file(all.get(r.value), `the file ${quote(r.value)}`);
      case 'fileContainingSymbol':
        return file(fileOfSymbol(r.value), `the symbol ${quote(r.value)}`);
      case 'fileContainingExtension':
        return notFound('the extension');
      case 'allExtensionNumbersOfType':
        return registry.getMessage(r.value)
          ? { case: 'allExtensionNumbersResponse', value: { baseTypeName: r.value, extensionNumber: [] } }
          : notFound(`the type ${quote(r.value)}`);
      default:
        return error(Code.InvalidArgument, 'the request names no question');
    }
  };
  return {
    async *serverReflectionInfo(requests) {
      for await (const req of requests)
        yield { validHost: req.host, originalRequest: req, messageResponse: respond(req.messageRequest) };
    },
  };
}

type Response = MessageInitShape<typeof ServerReflectionResponseSchema>['messageResponse'];

const error = (errorCode: Code, errorMessage: string): Response => ({
  case: 'errorResponse',
  value: { errorCode, errorMessage },
});
const notFound = (what: string): Response => error(Code.NotFound, `${what} is not served here`);
const quote = (name: string): string => JSON.stringify(name.slice(0, 200));
