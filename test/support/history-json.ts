import path from 'node:path';
import * as proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';
import type { History } from '@temporalio/common/lib/proto-utils';

/*
 * Histories to and from JSON as Temporal exports them (`temporal workflow show --output json`). The SDK's own
 * historyToJSON/historyFromJSON (@temporalio/common) fail here with "type must be a Type": npm gives
 * @temporalio/common and @temporalio/proto a protobufjs copy each (the top level holds grpc's protobufjs 7), and the
 * JSON codec of one copy refuses the message types of the other. So the codec is taken from the copy that made the
 * types.
 */
type ProtoJson = {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
};
const protoPackage = path.dirname(require.resolve('@temporalio/proto/package.json'));
const protojson = require(require.resolve('protobufjs/ext/protojson', { paths: [protoPackage] })) as ProtoJson;
const historyType = (patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown }).lookupType('temporal.api.history.v1.History');

export function historyToJSON(history: History): unknown {
  return protojson.toJson(historyType, proto.temporal.api.history.v1.History.fromObject(history));
}

/** Fields a newer server or SDK added are ignored, as the SDK's reader does. */
export function historyFromJSON(json: unknown): History {
  return protojson.fromJson(historyType, json, { ignoreUnknownFields: true }) as History;
}
