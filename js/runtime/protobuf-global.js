// For pages without a bundler: protobufjs's browser build (dist/light/protobuf.min.js, a classic <script>) sets
// globalThis.protobuf; an import map pointing the specifier 'protobufjs/light.js' here hands it to js/model/onnx.js.
export default globalThis.protobuf;
