package io.kvtier.client.protocol;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;

/** Each rule of docs/ipc-protocol.md section 4 that the record alone decides, broken by one crafted request. */
class RequestValidatorTest
{
    private static final int MAX_KEYS = 8;
    /** As WELCOME grants it with rings of 2 KiB: room for 8 keys, and for a registration of 5 allocations (a quarter of a ring). */
    private static final int MAX_MESSAGE = RequestDescriptor.maxMessageLength(MAX_KEYS, 2048);

    private final MemorySegment buffer = Arena.ofAuto().allocate(1024);
    private final RequestEncoder encoder = new RequestEncoder();
    private final RequestDecoder decoder = new RequestDecoder();

    private ErrorCode check(final int length, final int type, final long id, final int first, final int count, final int namespace, final int flags,
                            final long lastId, final int namespaces)
    {
        encoder.wrap(buffer, 0).header(length, type, id, first, count, namespace, flags);
        return RequestValidator.validate(decoder.wrap(buffer, 0, length), lastId, MAX_KEYS, namespaces, MAX_MESSAGE);
    }

    @Test
    void wellFormedRequestsOfEveryShapeAreAccepted()
    {
        assertThat(check(32 + 16 * 3, MessageType.RESERVE, 5, 2, 3, 0, 0, 4, 0)).isEqualTo(ErrorCode.OK);
        assertThat(check(32, MessageType.ACQUIRE, 5, 0, 8, 0, RequestDescriptor.FLAG_KEYS_IN_SLOTS, 4, 0)).isEqualTo(ErrorCode.OK);
        assertThat(check(32 + 4 * 2, MessageType.COMMIT, 5, 6, 2, 0, 0, 4, 0)).isEqualTo(ErrorCode.OK);
        assertThat(check(32, MessageType.RELEASE, 5, 0, 8, 0, 0, 4, 0)).isEqualTo(ErrorCode.OK);
        assertThat(check(32, MessageType.STATS, 5, 0, 0, 0, 0, 4, 0)).isEqualTo(ErrorCode.OK);
        assertThat(check(32, MessageType.CLOSE, 5, 0, 0, 2, 0, 4, 3)).isEqualTo(ErrorCode.OK);
    }

    @Test
    void lengthThatDoesNotMatchTheBodyIsMalformed()
    {
        assertThat(check(32 + 16 * 2, MessageType.LOOKUP, 5, 0, 3, 0, 0, 4, 0)).isEqualTo(ErrorCode.MALFORMED);
        assertThat(check(40, MessageType.RELEASE, 5, 0, 1, 0, 0, 4, 0)).isEqualTo(ErrorCode.MALFORMED);
        assertThat(check(24, MessageType.RELEASE, 5, 0, 1, 0, 0, 4, 0)).as("shorter than the header").isEqualTo(ErrorCode.MALFORMED);
        assertThat(check(32, MessageType.LOOKUP, 5, 0, 0, 0, 2, 4, 0)).as("unknown flag").isEqualTo(ErrorCode.MALFORMED);
        assertThat(check(32, MessageType.RELEASE, 5, 0, 1, 0, 1, 4, 0)).as("KEYS_IN_SLOTS without keys").isEqualTo(ErrorCode.MALFORMED);
    }

    @Test
    void deviceOperationsHaveTheLengthTheirBodyNames()
    {
        assertThat(check(40 + 8 * 3, MessageType.DEVICE_LOAD, 5, 1, 3, 0, 0, 4, 0)).isEqualTo(ErrorCode.OK);
        assertThat(check(40 + 8 * 2, MessageType.DEVICE_SAVE, 5, 1, 3, 0, 0, 4, 0)).isEqualTo(ErrorCode.MALFORMED);
        assertThat(check(32 + 8 * 3, MessageType.DEVICE_LOAD, 5, 1, 3, 0, 0, 4, 0)).as("without the layout id").isEqualTo(ErrorCode.MALFORMED);
        assertThat(check(40, MessageType.DEVICE_LOAD, 5, 0, 0, 0, RequestDescriptor.FLAG_KEYS_IN_SLOTS, 4, 0)).as("a flag on no keys")
            .isEqualTo(ErrorCode.MALFORMED);

        buffer.fill((byte)0);
        encoder.wrap(buffer, 0).registerKv(DeviceRequestDescriptor.HANDLE_HOST_FILE, 0, DeviceRequestDescriptor.ARRANGEMENT_INTERLEAVED,
            new int[] {2, 2, 16, 8, 128, 2, 64}, 2);
        assertThat(check(80 + 72 * 2, MessageType.REGISTER_KV, 5, 0, 0, 0, 0, 4, 0)).isEqualTo(ErrorCode.OK);
        assertThat(check(80 + 72, MessageType.REGISTER_KV, 5, 0, 0, 0, 0, 4, 0)).as("fewer allocations than it counts").isEqualTo(ErrorCode.MALFORMED);
        assertThat(check(80 + 72 * 2, MessageType.REGISTER_KV, 5, 0, 2, 0, 0, 4, 0)).as("slots on a slotless operation").isEqualTo(ErrorCode.SLOT_RANGE);
        buffer.set(LittleEndian.INT, DeviceRequestDescriptor.ALLOCATION_COUNT_OFFSET, -1);
        assertThat(check(80, MessageType.REGISTER_KV, 5, 0, 0, 0, 0, 4, 0)).as("a negative count").isEqualTo(ErrorCode.MALFORMED);
        buffer.set(LittleEndian.INT, DeviceRequestDescriptor.ALLOCATION_COUNT_OFFSET, DeviceRequestDescriptor.MAX_ALLOCATIONS + 1);
        assertThat(check(80, MessageType.REGISTER_KV, 5, 0, 0, 0, 0, 4, 0)).as("more than the most").isEqualTo(ErrorCode.MALFORMED);
    }

    @Test
    void maxMessageLengthHasRoomForTheLargestRegistrationThatFitsAQuarterOfARing()
    {
        assertThat(RequestDescriptor.maxMessageLength(8, 256 << 10)).isEqualTo(80 + 72 * DeviceRequestDescriptor.MAX_ALLOCATIONS);
        assertThat(RequestDescriptor.maxMessageLength(8, 4096)).isEqualTo(1024);
        assertThat(RequestDescriptor.maxMessageLength(4096, 256 << 10)).isEqualTo(32 + 16 * 4096);
    }

    @Test
    void unknownTypesAreNamed()
    {
        assertThat(check(32, 1, 5, 0, 0, 0, 0, 4, 0)).isEqualTo(ErrorCode.UNKNOWN_TYPE);
        assertThat(check(32, 12, 5, 0, 0, 0, 0, 4, 0)).isEqualTo(ErrorCode.UNKNOWN_TYPE);
        assertThat(check(32, 99, 5, 0, 0, 0, 0, 4, 0)).isEqualTo(ErrorCode.UNKNOWN_TYPE);
    }

    @Test
    void aRequestIdNotAboveTheLastIsStale()
    {
        assertThat(check(32, MessageType.RELEASE, 4, 0, 1, 0, 0, 4, 0)).isEqualTo(ErrorCode.STALE_REQUEST_ID);
        assertThat(check(32, MessageType.RELEASE, 3, 0, 1, 0, 0, 4, 0)).isEqualTo(ErrorCode.STALE_REQUEST_ID);
        assertThat(check(32, MessageType.RELEASE, -1L, 0, 1, 0, 0, 4, 0)).as("u64: above every signed id").isEqualTo(ErrorCode.OK);
    }

    @Test
    void slotsOutsideTheClientsAreOutOfRange()
    {
        assertThat(check(32, MessageType.RELEASE, 5, -1, 1, 0, 0, 4, 0)).isEqualTo(ErrorCode.SLOT_RANGE);
        assertThat(check(32, MessageType.RELEASE, 5, 0, -1, 0, 0, 4, 0)).isEqualTo(ErrorCode.SLOT_RANGE);
        assertThat(check(32, MessageType.RELEASE, 5, 7, 2, 0, 0, 4, 0)).isEqualTo(ErrorCode.SLOT_RANGE);
        assertThat(check(32, MessageType.RELEASE, 5, Integer.MAX_VALUE, Integer.MAX_VALUE, 0, 0, 4, 0)).isEqualTo(ErrorCode.SLOT_RANGE);
        assertThat(check(32, MessageType.FLUSH, 5, 0, 1, 0, 0, 4, 0)).as("a slotless operation naming slots").isEqualTo(ErrorCode.SLOT_RANGE);
    }

    @Test
    void aNamespaceIndexBeyondTheHellosIsDenied()
    {
        assertThat(check(32, MessageType.RELEASE, 5, 0, 1, 1, 0, 4, 0)).isEqualTo(ErrorCode.NAMESPACE_DENIED);
        assertThat(check(32, MessageType.RELEASE, 5, 0, 1, 2, 0, 4, 2)).isEqualTo(ErrorCode.NAMESPACE_DENIED);
        assertThat(check(32, MessageType.RELEASE, 5, 0, 1, 1, 0, 4, 2)).isEqualTo(ErrorCode.OK);
    }

    @Test
    void aReservedFieldThatIsNotZeroIsMalformed()
    {
        encoder.wrap(buffer, 0).header(32, MessageType.RELEASE, 5, 0, 1, 0, 0);
        buffer.set(LittleEndian.INT, RequestDescriptor.RESERVED_OFFSET, 7);
        assertThat(RequestValidator.validate(decoder.wrap(buffer, 0, 32), 4, MAX_KEYS, 0, MAX_MESSAGE)).as("the header's").isEqualTo(ErrorCode.MALFORMED);

        buffer.fill((byte)0);
        encoder.wrap(buffer, 0).header(48, MessageType.DEVICE_LOAD, 5, 0, 1, 0, 0).layoutId(1).copyEntry(0, 0, 1);
        assertThat(RequestValidator.validate(decoder.wrap(buffer, 0, 48), 4, MAX_KEYS, 0, MAX_MESSAGE)).isEqualTo(ErrorCode.OK);
        buffer.set(LittleEndian.INT, DeviceRequestDescriptor.LAYOUT_ID_OFFSET + 4, 1);
        assertThat(RequestValidator.validate(decoder.wrap(buffer, 0, 48), 4, MAX_KEYS, 0, MAX_MESSAGE)).as("a device copy's").isEqualTo(ErrorCode.MALFORMED);

        for (final int reserved : new int[] {DeviceRequestDescriptor.ARRANGEMENT_OFFSET + 2, DeviceRequestDescriptor.ALLOCATION_COUNT_OFFSET + 4})
        {
            buffer.fill((byte)0);
            encoder.wrap(buffer, 0).registerKv(DeviceRequestDescriptor.HANDLE_HOST_FILE, 0, DeviceRequestDescriptor.ARRANGEMENT_CONTIGUOUS,
                new int[] {2, 2, 16, 8, 128, 2, 64}, 1);
            encoder.header(80 + 72, MessageType.REGISTER_KV, 5, 0, 0, 0, 0);
            assertThat(RequestValidator.validate(decoder.wrap(buffer, 0, 152), 4, MAX_KEYS, 0, MAX_MESSAGE)).isEqualTo(ErrorCode.OK);
            buffer.set(java.lang.foreign.ValueLayout.JAVA_BYTE, reserved, (byte)1);
            assertThat(RequestValidator.validate(decoder.wrap(buffer, 0, 152), 4, MAX_KEYS, 0, MAX_MESSAGE)).as("REGISTER_KV's at %d", reserved)
                .isEqualTo(ErrorCode.MALFORMED);
        }
    }

    @Test
    void aRecordLongerThanMaxMessageLengthIsTooLong()
    {
        assertThat(check(MAX_MESSAGE + 8, MessageType.LOOKUP, 5, 0, 9, 0, 0, 4, 0)).isEqualTo(ErrorCode.TOO_LONG);
    }

    /** Version 1.3: LOOKUP_AND_LOCK's body is an ACQUIRE's, COMMIT_AND_RELEASE's a COMMIT's, and each has one field the others may not use. */
    @Test
    void theCombinedRequestsHaveTheirBodiesFlagAndReserveLimit()
    {
        assertThat(check(32 + 16 * 3, MessageType.LOOKUP_AND_LOCK, 5, 2, 3, 0, 0, 4, 0)).isEqualTo(ErrorCode.OK);
        assertThat(check(32, MessageType.LOOKUP_AND_LOCK, 5, 0, 8, 0, RequestDescriptor.FLAG_KEYS_IN_SLOTS, 4, 0)).isEqualTo(ErrorCode.OK);
        assertThat(check(32 + 4 * 2, MessageType.COMMIT_AND_RELEASE, 5, 6, 2, 0, 0, 4, 0)).isEqualTo(ErrorCode.OK);
        assertThat(check(32 + 4 * 2, MessageType.COMMIT_AND_RELEASE, 5, 6, 2, 0, RequestDescriptor.FLAG_BACKUP, 4, 0)).isEqualTo(ErrorCode.OK);
        assertThat(check(32 + 16 * 2, MessageType.COMMIT_AND_RELEASE, 5, 6, 2, 0, 0, 4, 0)).as("keys where lengths go").isEqualTo(ErrorCode.MALFORMED);
        assertThat(check(32 + 4 * 2, MessageType.COMMIT, 5, 6, 2, 0, RequestDescriptor.FLAG_BACKUP, 4, 0)).as("BACKUP on a COMMIT")
            .isEqualTo(ErrorCode.MALFORMED);
        assertThat(check(32 + 4 * 2, MessageType.COMMIT_AND_RELEASE, 5, 6, 2, 0, RequestDescriptor.FLAG_KEYS_IN_SLOTS, 4, 0))
            .as("KEYS_IN_SLOTS on an operation without keys").isEqualTo(ErrorCode.MALFORMED);
        assertThat(check(32 + 16, MessageType.LOOKUP_AND_LOCK, 5, 0, 1, 0, RequestDescriptor.FLAG_BACKUP, 4, 0)).as("BACKUP on a LOOKUP_AND_LOCK")
            .isEqualTo(ErrorCode.MALFORMED);
    }

    /** The header's word at offset 28 is a LOOKUP_AND_LOCK's Reserve Limit: -1 or 0..Count; any other Type keeps it reserved. */
    @Test
    void theReserveLimitIsTheLookupAndLocksAloneAndWithinItsCount()
    {
        for (final int limit : new int[] {-1, 0, 2, 3})
        {
            encoder.wrap(buffer, 0).header(32 + 16 * 3, MessageType.LOOKUP_AND_LOCK, 5, 0, 3, 0, 0).reserveLimit(limit);
            assertThat(RequestValidator.validate(decoder.wrap(buffer, 0, 80), 4, MAX_KEYS, 0, MAX_MESSAGE)).as("limit %d", limit).isEqualTo(ErrorCode.OK);
            assertThat(RequestValidator.reserveLimitValid(decoder)).as("limit %d", limit).isTrue();
            assertThat(decoder.reserveLimit()).isEqualTo(limit);
        }
        for (final int limit : new int[] {-2, 4, Integer.MIN_VALUE, Integer.MAX_VALUE})
        {
            encoder.wrap(buffer, 0).header(32 + 16 * 3, MessageType.LOOKUP_AND_LOCK, 5, 0, 3, 0, 0).reserveLimit(limit);
            assertThat(RequestValidator.validate(decoder.wrap(buffer, 0, 80), 4, MAX_KEYS, 0, MAX_MESSAGE)).isEqualTo(ErrorCode.OK);
            assertThat(RequestValidator.reserveLimitValid(decoder)).as("limit %d of 3 keys", limit).isFalse();
        }
        encoder.wrap(buffer, 0).header(32 + 16 * 3, MessageType.ACQUIRE, 5, 0, 3, 0, 0).reserveLimit(1);
        assertThat(RequestValidator.validate(decoder.wrap(buffer, 0, 80), 4, MAX_KEYS, 0, MAX_MESSAGE)).as("an ACQUIRE's reserved word")
            .isEqualTo(ErrorCode.MALFORMED);
        encoder.wrap(buffer, 0).header(32 + 4 * 3, MessageType.COMMIT_AND_RELEASE, 5, 0, 3, 0, 0).reserveLimit(1);
        assertThat(RequestValidator.validate(decoder.wrap(buffer, 0, 44), 4, MAX_KEYS, 0, MAX_MESSAGE)).as("a COMMIT_AND_RELEASE's reserved word")
            .isEqualTo(ErrorCode.MALFORMED);
    }
}
