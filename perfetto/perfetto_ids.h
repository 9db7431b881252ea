/* perfetto/: the Perfetto protobuf encoder of typed events: packets,
 * interning, tracks, annotations; on encode/ and below. */
/* Field numbers and enum values of Perfetto's trace schema used by the
 * encoder (perfetto_enc.c), from protos/perfetto/trace/ (trace.proto,
 * trace_packet.proto, track_event/{track_event,track_descriptor,
 * process_descriptor,thread_descriptor,counter_descriptor,
 * debug_annotation}.proto, interned_data/interned_data.proto,
 * clock_snapshot.proto, trace_packet_defaults.proto), checked against the
 * descriptors of perfetto_trace_pb2 in the `perfetto` PyPI package. */
#ifndef TP_PERFETTO_IDS_H
#define TP_PERFETTO_IDS_H

enum {
	PF_TRACE_PACKET = 1,			/* Trace.packet */

	PF_PKT_CLOCK_SNAPSHOT = 6,		/* TracePacket */
	PF_PKT_TIMESTAMP = 8,
	PF_PKT_SEQ_ID = 10,			/* trusted_packet_sequence_id */
	PF_PKT_TRACK_EVENT = 11,
	PF_PKT_INTERNED_DATA = 12,
	PF_PKT_SEQUENCE_FLAGS = 13,
	PF_PKT_DEFAULTS = 59,			/* trace_packet_defaults */
	PF_PKT_TIMESTAMP_CLOCK_ID = 58,
	PF_PKT_TRACK_DESCRIPTOR = 60,
	PF_PKT_FIRST_ON_SEQUENCE = 87,

	PF_SEQ_INCREMENTAL_STATE_CLEARED = 1,
	PF_SEQ_NEEDS_INCREMENTAL_STATE = 2,

	PF_DEFAULTS_CLOCK_ID = 58,		/* TracePacketDefaults */
	PF_DEFAULTS_TRACK_EVENT = 11,
	PF_TED_TRACK_UUID = 11,			/* TrackEventDefaults */

	PF_CS_CLOCKS = 1,			/* ClockSnapshot */
	PF_CS_PRIMARY_TRACE_CLOCK = 2,
	PF_CLOCK_ID = 1,			/* ClockSnapshot.Clock */
	PF_CLOCK_TIMESTAMP = 2,
	PF_CLOCK_IS_INCREMENTAL = 3,
	PF_BUILTIN_CLOCK_REALTIME = 1,
	PF_BUILTIN_CLOCK_BOOTTIME = 6,
	PF_BUILTIN_CLOCK_TRACE_FILE = 11,

	PF_TE_CATEGORY_IIDS = 3,		/* TrackEvent */
	PF_TE_DEBUG_ANNOTATIONS = 4,
	PF_TE_TYPE = 9,
	PF_TE_NAME_IID = 10,
	PF_TE_TRACK_UUID = 11,
	PF_TE_CATEGORIES = 22,
	PF_TE_NAME = 23,
	PF_TE_COUNTER_VALUE = 30,
	PF_TE_DOUBLE_COUNTER_VALUE = 44,
	PF_TE_FLOW_IDS = 47,			/* fixed64 */
	PF_TE_TERMINATING_FLOW_IDS = 48,	/* fixed64 */

	PF_TYPE_SLICE_BEGIN = 1,		/* TrackEvent.Type */
	PF_TYPE_SLICE_END = 2,
	PF_TYPE_INSTANT = 3,
	PF_TYPE_COUNTER = 4,

	PF_TD_UUID = 1,				/* TrackDescriptor */
	PF_TD_NAME = 2,
	PF_TD_PROCESS = 3,
	PF_TD_THREAD = 4,
	PF_TD_PARENT_UUID = 5,
	PF_TD_COUNTER = 8,
	PF_TD_SIBLING_MERGE_BEHAVIOR = 15,
	PF_SIBLING_MERGE_NONE = 2,

	PF_PD_PID = 1,				/* ProcessDescriptor */
	PF_PD_LEGACY_SORT_INDEX = 3,
	PF_PD_PROCESS_NAME = 6,
	PF_THD_PID = 1,				/* ThreadDescriptor */
	PF_THD_TID = 2,
	PF_THD_THREAD_NAME = 5,

	PF_DA_NAME_IID = 1,			/* DebugAnnotation */
	PF_DA_BOOL = 2,
	PF_DA_UINT = 3,
	PF_DA_INT = 4,
	PF_DA_DOUBLE = 5,
	PF_DA_STRING = 6,
	PF_DA_POINTER = 7,
	PF_DA_LEGACY_JSON = 9,
	PF_DA_NAME = 10,
	PF_DA_DICT_ENTRIES = 11,
	PF_DA_ARRAY_VALUES = 12,
	PF_DA_STRING_IID = 17,

	PF_ID_EVENT_CATEGORIES = 1,		/* InternedData */
	PF_ID_EVENT_NAMES = 2,
	PF_ID_DEBUG_ANNOTATION_NAMES = 3,
	PF_ID_DEBUG_ANNOTATION_STRINGS = 29,
	PF_INTERNED_IID = 1,			/* EventName, EventCategory, */
	PF_INTERNED_NAME = 2,			/* DebugAnnotationName, InternedString */
};

/* Sequence-scoped clock ids (64..127 are the producer's own): 64 counts
 * ns as deltas from the previous packet on it, 65 is the trace clock
 * itself (ns since the trace's base), for packets that go back in time. */
#define PF_CLOCK_INCREMENTAL 64
#define PF_CLOCK_TRACE 65

#endif
