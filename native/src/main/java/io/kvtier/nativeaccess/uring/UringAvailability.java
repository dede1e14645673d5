package io.kvtier.nativeaccess.uring;

/**
 * Whether this process can use io_uring and, when it cannot, why and what would enable it.
 *
 * @param available whether {@link Uring#open} can succeed
 * @param reason    why it cannot (empty when available), naming the errno or setting at fault
 * @param remedy    what to change to enable it (empty when available)
 */
public record UringAvailability(boolean available, String reason, String remedy)
{
    /** The answer when io_uring works. */
    public static final UringAvailability AVAILABLE = new UringAvailability(true, "", "");

    /**
     * @param reason why io_uring cannot be used
     * @param remedy what would enable it
     * @return an unavailable answer (also what tests use to simulate a kernel without io_uring)
     */
    public static UringAvailability unavailable(final String reason, final String remedy)
    {
        return new UringAvailability(false, reason, remedy);
    }

    /** @return "available", or the reason and the remedy in one line, for logs and {@code kvtier stat} */
    public String describe()
    {
        return available ? "available" : reason + "; to enable: " + remedy;
    }
}
