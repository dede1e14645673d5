package io.kvtier.engine.config;

/** Whether admission refuses what its reasons name, or only counts and logs them. */
public enum AdmissionMode
{
    /** A page a reason names is not admitted. */
    ENFORCE("enforce"),
    /** A page a reason names is counted and logged under the reason, and admitted anyway: a policy tried on live traffic. */
    SHADOW("shadow");

    private final String configName;

    AdmissionMode(final String configName)
    {
        this.configName = configName;
    }

    /** @return the name used in settings */
    public String configName()
    {
        return configName;
    }
}
